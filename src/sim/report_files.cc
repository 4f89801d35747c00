#include "sim/report_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/bounded_file.h"

namespace aiscale::sim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTempMarker = ".aiscale-tmp-";

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view x) {
  return s.size() >= x.size() && s.substr(s.size() - x.size()) == x;
}

// A name this writer may delete: its own outputs and temporaries, never anything else.
bool OwnedName(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return false;
  }
  return name == "report.json" || name == "report.html" ||
         (StartsWith(name, "decisions-") && EndsWith(name, ".jsonl")) ||
         StartsWith(name, kTempMarker);
}

Status WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error(std::strerror(errno));
    text.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace

std::string DecisionLogFileName(const std::string& label) {
  std::string safe = label;
  for (char& c : safe) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  return "decisions-" + safe + ".jsonl";
}

Status CheckDecisionLogNames(const std::vector<std::string>& labels) {
  std::map<std::string, std::string> by_file;
  for (const auto& l : labels) {
    const std::string f = DecisionLogFileName(l);
    const auto [it, inserted] = by_file.emplace(f, l);
    if (!inserted) {
      return Status::Invalid("compare labels '" + it->second + "' and '" + l +
                             "' would both write " + f + "; give one of them another label");
    }
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, std::string_view text) {
  const fs::path target(path);
  const fs::path tmp =
      target.parent_path() /
      (std::string(kTempMarker) + target.filename().string() + "." + std::to_string(::getpid()));
  const auto fail = [&](const std::string& why) {
    ::unlink(tmp.c_str());
    return Status::Error("unable to write " + path + ": " + why);
  };
  ::unlink(tmp.c_str());  // a leftover of a killed process that had this pid
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Error("unable to write " + path + ": " + std::strerror(errno));
  Status s = WriteAll(fd, text);
  if (s.ok() && ::fsync(fd) != 0) s = Status::Error(std::strerror(errno));
  if (::close(fd) != 0 && s.ok()) s = Status::Error(std::strerror(errno));
  if (!s.ok()) return fail(s.message());
  if (::rename(tmp.c_str(), target.c_str()) != 0) return fail(std::strerror(errno));
  return Status::Ok();
}

Result<OutputLock> OutputLock::Acquire(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("unable to create report folder " + dir + ": " + ec.message());
  const std::string path = (fs::path(dir) / kLockFileName).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return Status::Error("unable to lock report folder " + dir + ": " + path + ": " +
                         std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder;
    char buf[32] = {};
    if (::pread(fd, buf, sizeof(buf) - 1, 0) > 0) holder = std::string(buf);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::Conflict("report folder " + dir + " is in use by another aiscale run" +
                              (holder.empty() ? "" : " (pid " + holder + ")") +
                              "; wait for it or choose another --out");
    }
    return Status::Error("unable to lock report folder " + dir + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)::pwrite(fd, pid.data(), pid.size(), 0);
  return OutputLock(fd, dir);
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

Status ReplaceManifest(const OutputLock& lock, const std::vector<std::string>& written) {
  const fs::path dir(lock.dir());
  const std::set<std::string> keep(written.begin(), written.end());
  std::set<std::string> stale;
  if (auto old = ReadBoundedFile((dir / kManifestFileName).string(), kConfigFileLimit); old.ok()) {
    std::istringstream in(*old);
    for (std::string name; std::getline(in, name);) stale.insert(name);
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if ((StartsWith(name, "decisions-") && EndsWith(name, ".jsonl")) ||
        StartsWith(name, kTempMarker)) {
      stale.insert(name);
    }
  }
  for (const auto& name : stale) {
    if (keep.count(name) || !OwnedName(name)) continue;
    fs::remove(dir / name, ec);  // best effort: a file already gone is fine
  }
  std::string text;
  for (const auto& name : written) text += name + "\n";
  RETURN_IF_ERROR(WriteFileAtomic((dir / kManifestFileName).string(), text));
  // The renames are durable once the folder itself is flushed (best effort).
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

}  // namespace aiscale::sim
