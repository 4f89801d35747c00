#include "store/wal_checkpointer.h"

#include <utility>

namespace aiscale::store {

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(const std::string& path,
                                                                bool sync_full, int pages) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  const auto fail = [&](const std::string& what) {
    const std::string cause = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::Error("unable to " + what + " for checkpoints of " + path + ": " + cause);
  };
  if (rc != SQLITE_OK) return fail("open a second connection");
  // Reading the schema opens the WAL, which a checkpoint needs; the pages the checkpoint copies
  // are synced as the writer's would be.
  const char* setup = sync_full ? "PRAGMA synchronous=FULL; SELECT 1 FROM sqlite_master LIMIT 1"
                                : "PRAGMA synchronous=NORMAL; SELECT 1 FROM sqlite_master LIMIT 1";
  if (sqlite3_exec(db, setup, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return fail("set up a second connection");
  }
  std::unique_ptr<WalCheckpointer> c(new WalCheckpointer(db, pages));
  c->thread_ = std::thread([p = c.get()] { p->Loop(); });
  return c;
}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  thread_.join();
  sqlite3_close(db_);
}

bool WalCheckpointer::Nudge(int wal_pages) {
  if (wal_pages < pages_) return false;
  std::unique_lock<std::mutex> lock(mu_);
  if (wal_pages >= pages_ * kWriterTakesOver) {
    // The writer's checkpoint would get SQLITE_BUSY beside a running one, and the WAL would go
    // on growing: the thread finishes its run and starts no other until the next nudge.
    idle_cv_.wait(lock, [&] { return !running_; });
    due_ = false;
    return true;
  }
  due_ = true;
  lock.unlock();
  cv_.notify_one();
  return false;
}

WalCheckpointer::Stats WalCheckpointer::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void WalCheckpointer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return due_ || stop_; });
    if (stop_) return;
    due_ = false;
    running_ = true;
    lock.unlock();
    // PASSIVE copies what no reader still needs and never waits; BUSY means another
    // checkpoint (another process's) is running, which does the same work.
    int log = 0, done = 0;
    const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
    std::string error = rc == SQLITE_OK || rc == SQLITE_BUSY ? "" : sqlite3_errmsg(db_);
    lock.lock();
    running_ = false;
    if (rc == SQLITE_OK) {
      ++stats_.checkpoints;
      stats_.log_frames = log;
      stats_.checkpointed_frames = done;
    }
    if (!error.empty()) {
      ++stats_.failures;
      stats_.last_error = std::move(error);
    }
    idle_cv_.notify_all();
  }
}

}  // namespace aiscale::store
