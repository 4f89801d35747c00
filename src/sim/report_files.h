// Report files: how a run's outputs reach its --out folder safely.
//
// Why (issue 11): a run killed while writing must never leave a truncated report.json, two runs
// into one folder must not mix their files, and a rerun must not leave an earlier run's decision
// logs beside the new report. So every file is written to a temporary file in the same folder,
// flushed and renamed over the old one (readers see the old or the new file, whole); the
// folder is locked for the whole run with flock() on DIR/.aiscale.lock (a second run fails at
// once, naming the holder's pid); and DIR/.aiscale-manifest lists the files of the last run,
// so a rerun removes the ones it did not write again. Not thread-safe; the lock is
// per-process (a second lock on the same folder from one process fails too).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace aiscale::sim {

inline constexpr const char* kLockFileName = ".aiscale.lock";
inline constexpr const char* kManifestFileName = ".aiscale-manifest";

// "decisions-<label>.jsonl" with every character other than [A-Za-z0-9_-] replaced by '_'.
std::string DecisionLogFileName(const std::string& label);
// Error naming both labels when two of `labels` map to one decision-log file.
Status CheckDecisionLogNames(const std::vector<std::string>& labels);

// Writes `text` to `path` atomically (temporary file in the same folder, fsync, rename).
Status WriteFileAtomic(const std::string& path, std::string_view text);

// An exclusive lock on an output folder (created if needed), released on destruction.
class OutputLock {
 public:
  // Fails with code kConflict when another process (or another OutputLock) holds it.
  static Result<OutputLock> Acquire(const std::string& dir);
  OutputLock(OutputLock&& o) noexcept : fd_(o.fd_), dir_(std::move(o.dir_)) { o.fd_ = -1; }
  OutputLock& operator=(OutputLock&&) = delete;
  OutputLock(const OutputLock&) = delete;
  ~OutputLock();
  const std::string& dir() const { return dir_; }

 private:
  OutputLock(int fd, std::string dir) : fd_(fd), dir_(std::move(dir)) {}
  int fd_;
  std::string dir_;
};

// With the folder locked: removes the files the previous run listed in the manifest, every
// decisions-*.jsonl and every leftover temporary file that is not in `written` (base names),
// then records `written` as the new manifest. Only base names of the report's own kinds are
// ever removed, whatever the manifest says.
Status ReplaceManifest(const OutputLock& lock, const std::vector<std::string>& written);

}  // namespace aiscale::sim
