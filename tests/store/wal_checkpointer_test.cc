// WalCheckpointer and SqliteStore's use of it: checkpoints run on the thread once the WAL passes
// its threshold, copy the log into the file, and keep the WAL bounded; with the option off
// SQLite's own checkpoint runs as before. A real SQLite file in a temp directory.
#include "store/wal_checkpointer.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace aiscale::store {
namespace {

using aiscale::testing::FreshTempDir;

// Polls `done` for up to 20 s (a loaded CI machine under TSan is slow; a pass takes ms).
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int64_t FileBytes(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

// A WAL database whose log holds `rows` rows of 4 KiB, never checkpointed (the connection
// stays open, so closing it does not checkpoint either).
sqlite3* WalWithRows(const std::string& path, int rows) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db,
                         "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;"
                         "CREATE TABLE t (b BLOB)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  for (int i = 0; i < rows; ++i) {
    EXPECT_EQ(sqlite3_exec(db, "INSERT INTO t VALUES (zeroblob(4096))", nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  return db;
}

TEST(WalCheckpointer, RunsOnItsThreadPastItsPagesAndHandsBackFarPast) {
  const std::string path = FreshTempDir("wal_ckpt") + "/t.db";
  sqlite3* writer = WalWithRows(path, 50);
  const int64_t before = FileBytes(path);
  auto c = WalCheckpointer::Start(path, /*sync_full=*/false, /*pages=*/40);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE((*c)->Nudge(39));
  EXPECT_FALSE((*c)->Nudge(40));
  ASSERT_TRUE(Eventually([&] { return (*c)->stats().checkpoints >= 1; }));
  const auto st = (*c)->stats();
  EXPECT_EQ(st.failures, 0) << st.last_error;
  EXPECT_EQ(st.log_frames, st.checkpointed_frames);
  EXPECT_GE(st.log_frames, 50);
  // The 50 rows are in the file now, not only in the log.
  EXPECT_GE(FileBytes(path), before + 50 * 4096);
  // Far past the threshold the writer is told to checkpoint itself (the thread is idle then).
  struct Row {
    int wal_pages;
    bool writer_takes_over;
  };
  for (const Row& r : {Row{319, false}, Row{320, true}, Row{100000, true}}) {
    EXPECT_EQ((*c)->Nudge(r.wal_pages), r.writer_takes_over) << r.wal_pages;
  }
  c->reset();
  sqlite3_close(writer);
}

TEST(WalCheckpointer, StartOnAMissingFileIsAClearError) {
  const std::string path = FreshTempDir("wal_ckpt") + "/none/t.db";
  auto c = WalCheckpointer::Start(path, false, 1000);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(
      c.status().message().find("unable to open a second connection for checkpoints of " + path),
      std::string::npos)
      << c.status().message();
}

// States of ~32 KiB that change on every save: each save is a transaction of ~9 pages (the
// stores below use 4 KiB pages, SQLite's default, so the counts here hold).
PersistentState BigState(int round) {
  PersistentState s;
  std::vector<double>& v = s.Vec("window");
  for (int i = 0; i < 4096; ++i) v.push_back(round * 10000.0 + i);
  return s;
}

TEST(SqliteStoreCheckpoints, RunOffTheCommitAndCopyTheLogIntoTheFile) {
  const std::string path = FreshTempDir("wal_ckpt") + "/store.db";
  StoreOptions o;
  o.sync_every_commit = false;
  o.page_size = 4096;
  auto s = SqliteStore::Open(path, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  // Past 1,000 pages of WAL: the thread checkpoints, and the file takes the states.
  for (int round = 0; round < 150; ++round) {
    ASSERT_TRUE((*s)->SaveState("k", BigState(round)).ok());
  }
  ASSERT_TRUE(Eventually([&] { return (*s)->Stats().checkpoints >= 1; }))
      << (*s)->Stats().checkpoint_error;
  EXPECT_GE(FileBytes(path), 32 * 1024);
  EXPECT_EQ((*s)->Stats().checkpoint_failures, 0) << (*s)->Stats().checkpoint_error;
}

TEST(SqliteStoreCheckpoints, AWriterThatOutrunsTheThreadStillBoundsTheWal) {
  const std::string path = FreshTempDir("wal_ckpt") + "/store.db";
  StoreOptions o;
  o.sync_every_commit = false;
  o.page_size = 4096;
  o.checkpoint_pages = 20;
  auto s = SqliteStore::Open(path, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  // ~2,700 pages back to back, with no pause for the thread: past 8 x 20 pages the writer
  // checkpoints itself, and the WAL starts over at the next commit.
  for (int round = 0; round < 300; ++round) {
    ASSERT_TRUE((*s)->SaveState("k", BigState(round)).ok());
  }
  const int64_t frame = 4096 + 24;
  EXPECT_LE(FileBytes(path + "-wal"),
            32 + (WalCheckpointer::kWriterTakesOver * 20 + 2 * 10) * frame);
  auto loaded = (*s)->LoadState("k");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded, BigState(299));
}

TEST(SqliteStoreCheckpoints, WithTheOptionOffSqliteCheckpointsInTheCommit) {
  const std::string path = FreshTempDir("wal_ckpt") + "/store.db";
  StoreOptions o;
  o.sync_every_commit = false;
  o.page_size = 4096;
  o.checkpoint_in_background = false;
  auto s = SqliteStore::Open(path, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  for (int round = 0; round < 150; ++round) {
    ASSERT_TRUE((*s)->SaveState("k", BigState(round)).ok());
  }
  // SQLite's automatic checkpoint ran inside a commit: the file holds the state already.
  EXPECT_EQ((*s)->Stats().checkpoints, 0);
  EXPECT_GE(FileBytes(path), 32 * 1024);
}

}  // namespace
}  // namespace aiscale::store
