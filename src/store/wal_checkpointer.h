// WalCheckpointer: copies a WAL database's log back into the file on a thread of its own, so
// the writer's commit never waits for that copy and its fsync.
//
// Why: SQLite checkpoints inside the COMMIT that pushes the WAL past 1,000 pages; at 10,000
// workloads that was ~35 ms of a tick spent waiting on the disk (bench/controller_bench.cc).
// The writer turns its own automatic checkpoint off and calls Nudge after each commit with the
// WAL's size; past `pages` the thread runs a PASSIVE checkpoint through a second connection
// (it never blocks the writer or readers). The WAL starts over at the first commit after a
// checkpoint that caught up; a writer that keeps outrunning the thread bounds it itself: past
// `pages` x kWriterTakesOver, Nudge waits for the thread's run to end and returns true, and the
// writer checkpoints on its own connection. Stops and joins on destruction.
#pragma once

#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/result.h"

namespace aiscale::store {

class WalCheckpointer {
 public:
  static constexpr int kWriterTakesOver = 8;
  // Opens its own connection to `path` (a file already in WAL mode) with the writer's
  // synchronous setting, and starts the thread.
  static Result<std::unique_ptr<WalCheckpointer>> Start(const std::string& path, bool sync_full,
                                                        int pages);
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // The writer committed and the WAL holds `wal_pages`. Returns true when the writer should
  // checkpoint on its own connection now (the thread has fallen far behind; it is idle then).
  bool Nudge(int wal_pages);

  struct Stats {
    int64_t checkpoints = 0;  // runs that completed
    int64_t failures = 0;     // runs that returned an error (the next nudge tries again)
    std::string last_error;
    // The last run's WAL size and how much of it was in the file at its end, in frames
    // (pages): equal when it caught up.
    int64_t log_frames = 0, checkpointed_frames = 0;
  };
  Stats stats();

 private:
  WalCheckpointer(sqlite3* db, int pages) : db_(db), pages_(pages) {}
  void Loop();

  sqlite3* const db_;  // used by the thread alone
  const int pages_;
  std::mutex mu_;
  std::condition_variable cv_;       // due_ or stop_ was set
  std::condition_variable idle_cv_;  // running_ was cleared
  bool due_ = false;                 // GUARDED_BY(mu_)
  bool running_ = false;             // GUARDED_BY(mu_)
  bool stop_ = false;                // GUARDED_BY(mu_)
  Stats stats_;                      // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace aiscale::store
