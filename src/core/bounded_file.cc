#include "core/bounded_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace aiscale {
namespace {

std::string Prefix(const std::string& path, const FileLimit& limit) {
  return std::string("unable to read ") + limit.kind + " " + path + ": ";
}

Status ErrnoStatus(const std::string& path, const FileLimit& limit, int err) {
  const std::string msg = Prefix(path, limit) + std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return Status::NotFound(msg);
  if (err == EACCES || err == EPERM) return Status::PermissionDenied(msg);
  return Status::Invalid(msg);
}

const char* KindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string MiB(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

Status CheckStat(const struct stat& st, const std::string& path, const FileLimit& limit) {
  if (!S_ISREG(st.st_mode)) {
    return Status::Invalid(Prefix(path, limit) + "is " + KindName(st.st_mode) +
                           "; only regular files are read");
  }
  if (static_cast<uint64_t>(st.st_size) > limit.max_bytes) {
    return Status::Invalid(Prefix(path, limit) + "is " + std::to_string(st.st_size) +
                           " bytes, over the limit of " + MiB(limit.max_bytes) + " for a " +
                           limit.kind);
  }
  return Status::Ok();
}

// Kernel pseudo-files look regular with size 0 and may never end (/proc/kmsg blocks).
Status CheckFileSystem(const struct statfs& fs, const std::string& path, const FileLimit& limit) {
  constexpr long kProc = 0x9fa0, kSysfs = 0x62656572, kDebugfs = 0x64626720;
  const long type = static_cast<long>(fs.f_type);
  if (type == kProc || type == kSysfs || type == kDebugfs) {
    return Status::Invalid(Prefix(path, limit) +
                           "is a kernel pseudo-file (/proc, /sys); only regular files are read");
  }
  return Status::Ok();
}

}  // namespace

Result<uint64_t> CheckRegularFile(const std::string& path, const FileLimit& limit) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(path, limit, errno);
  RETURN_IF_ERROR(CheckStat(st, path, limit));
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) == 0) RETURN_IF_ERROR(CheckFileSystem(fs, path, limit));
  return static_cast<uint64_t>(st.st_size);
}

Result<int> OpenBoundedFile(const std::string& path, const FileLimit& limit) {
  RETURN_IF_ERROR(CheckRegularFile(path, limit).status());
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, limit, errno);
  struct stat st {};
  struct statfs fs {};
  Status s = ::fstat(fd, &st) == 0 ? CheckStat(st, path, limit) : ErrnoStatus(path, limit, errno);
  if (s.ok() && ::fstatfs(fd, &fs) == 0) s = CheckFileSystem(fs, path, limit);
  if (!s.ok()) {
    ::close(fd);
    return s;
  }
  // Regular files ignore O_NONBLOCK, but clear it so reads behave as usual everywhere.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

Result<std::string> ReadBoundedFile(const std::string& path, const FileLimit& limit) {
  ASSIGN_OR_RETURN(const int fd, OpenBoundedFile(path, limit));
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(path, limit, err);
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > limit.max_bytes) {
      ::close(fd);
      return Status::Invalid(Prefix(path, limit) + "grew past the limit of " +
                             MiB(limit.max_bytes) + " while being read");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace aiscale
