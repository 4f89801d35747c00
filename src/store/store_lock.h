// StoreLock: one daemon per store file. `aiscale run` takes it before opening its store and
// holds it until it exits; a second daemon on the same store is refused with the holder's pid.
//
// Why: two daemons on one store both ran, each applied its own decisions, and a workload sized
// 3 ended up with 6 replicas. The lock is flock(2) on PATH.lock beside the store (SQLite's own
// locks are per transaction, not per process lifetime); the kernel drops it when the holder
// dies, kill -9 included, so a crash never leaves a store locked. Readers of a store (`aiscale
// explain`, the tests) take no lock. Not thread-safe; one per process and store.
#pragma once

#include <memory>
#include <string>

#include "core/result.h"

namespace aiscale::store {

class StoreLock {
 public:
  // Locks `store_path` + ".lock" (created 0600 if absent) and writes this process's pid in it.
  // kConflict naming the holder's pid when another process holds it; kUnavailable naming the
  // lock file and the reason when it cannot be created.
  static Result<std::unique_ptr<StoreLock>> Acquire(const std::string& store_path);
  ~StoreLock();
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  StoreLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

}  // namespace aiscale::store
