#include "store/store_path.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace aiscale::store {
namespace {

std::string KindOf(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  return "not a regular file";
}

Status Problem(const std::string& path, const std::string& why, int err = 0) {
  std::string m = "store " + path + " " + why;
  if (err != 0) {
    m += ": ";
    m += std::strerror(err);
  }
  return err == EACCES || err == EPERM || err == EROFS ? Status::PermissionDenied(m)
                                                       : Status::Invalid(m);
}

}  // namespace

Status CheckStorePath(const std::string& path) {
  if (path.empty() || path[0] == ':' || path.rfind("file:", 0) == 0) return Status::Ok();
  const std::filesystem::path p(path);
  const std::string name = p.filename().string();
  if (path.size() >= PATH_MAX || name.size() > NAME_MAX) {
    return Problem(path, "has a name too long for the filesystem", ENAMETOOLONG);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return Problem(path, "is " + KindOf(st.st_mode) + ", not a file");
    if (::access(path.c_str(), R_OK | W_OK) != 0) return Problem(path, "is not writable", errno);
  } else if (errno != ENOENT) {
    return Problem(path, "cannot be read", errno);
  }
  std::string dir = p.parent_path().string();
  if (dir.empty()) dir = ".";
  if (::stat(dir.c_str(), &st) != 0) return Problem(path, "cannot be created in " + dir, errno);
  if (!S_ISDIR(st.st_mode)) return Problem(path, "cannot be created in " + dir, ENOTDIR);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    // WAL mode needs PATH-wal and PATH-shm beside the file, so the directory must be writable
    // even when the file itself is.
    return Problem(path, "is in directory " + dir + ", where files cannot be created", errno);
  }
  return Status::Ok();
}

}  // namespace aiscale::store
