#include "store/store_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aiscale::store {
namespace {

// The pid the holder wrote, or "unknown" (it may be writing it right now).
std::string HolderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

Result<std::unique_ptr<StoreLock>> StoreLock::Acquire(const std::string& store_path) {
  const std::string path = store_path + ".lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Unavailable("unable to lock store " + store_path + ": cannot open " + path +
                               ": " + std::strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string pid = err == EWOULDBLOCK ? HolderPid(fd) : "";
    ::close(fd);
    if (err != EWOULDBLOCK) {
      return Status::Unavailable("unable to lock store " + store_path + ": " + path + ": " +
                                 std::strerror(err));
    }
    return Status::Conflict("store " + store_path + " is in use by another aiscale (pid " + pid +
                            ", lock " + path +
                            "): a store belongs to one daemon; give this one a store of its own "
                            "or stop the other");
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  // Best effort: the lock holds without the pid; a second daemon's message then says
  // "unknown".
  const bool wrote = ftruncate(fd, 0) == 0 &&
                     pwrite(fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
  (void)wrote;
  return std::unique_ptr<StoreLock>(new StoreLock(path, fd));
}

StoreLock::~StoreLock() {
  // The file stays: removing it would let a third process lock a new inode while a second
  // still waits on the old one.
  ::close(fd_);
}

}  // namespace aiscale::store
