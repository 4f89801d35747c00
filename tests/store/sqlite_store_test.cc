// SqliteStore beyond the shared suite: restarts, bad paths and files, WAL, migrations.
#include "store/sqlite_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/decision_codec.h"
#include "store/migrations.h"
#include "store/store_test_util.h"

namespace aiscale::store {
namespace {

using aiscale::testing::FreshTempDir;
using aiscale::testing::FullDecision;

TEST(SqliteStore, ReopenedFileKeepsDecisionsAndState) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  PersistentState st;
  st.Set("last_scale_s", 1234.5);
  st.Vec("recs") = {3, 4, 5};
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().message();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*s)->Append(FullDecision("ns/w", 10 * i, i)).ok());
    ASSERT_TRUE((*s)->SaveState("ns/w/policy", st).ok());
  }
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto got = (*s)->Recent("ns/w", 10);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ToJson((*got)[i]), ToJson(FullDecision("ns/w", 10 * i, i)));
    EXPECT_EQ((*got)[i].at, FullDecision("ns/w", 10 * i, i).at);
  }
  auto loaded = (*s)->LoadState("ns/w/policy");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded, st);
  // Reopening must not re-run migrations or lose the version.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto v = SchemaVersion(db);
  sqlite3_close(db);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, LatestSchemaVersion());
}

TEST(SqliteStore, RetentionHoldsAcrossReopen) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  for (int round = 0; round < 2; ++round) {
    auto s = SqliteStore::Open(path, StoreOptions{2, false});
    ASSERT_TRUE(s.ok()) << s.status().message();
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE((*s)->Append(FullDecision("w", round * 10 + i, i)).ok());
    }
  }
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok());
  auto got = (*s)->Recent("w", 100);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[1].at, FullDecision("w", 12, 2).at);
}

// The store holds the operator's decisions and learned state: a file it creates is 0600 (and
// its WAL follows), whatever the umask would allow; a file that exists keeps its mode.
TEST(SqliteStore, CreatesItsFilePrivate) {
  struct Case {
    const char* name;
    bool exists_before;  // created 0644 before Open
    mode_t want;
  };
  const std::vector<Case> cases = {
      {"new file", false, 0600},
      {"existing file", true, 0644},
  };
  const mode_t old_umask = ::umask(022);  // would give 0644 to a file created the default way
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = FreshTempDir("sqlite_mode") + "/store.db";
    if (c.exists_before) {
      std::ofstream(path).close();
      std::filesystem::permissions(path, static_cast<std::filesystem::perms>(0644));
    }
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->Append(FullDecision("w", 1, 0)).ok());
    for (const std::string& f : {path, path + "-wal"}) {
      struct stat st {};
      ASSERT_EQ(::stat(f.c_str(), &st), 0) << f;
      EXPECT_EQ(st.st_mode & 0777, c.want) << f;
    }
  }
  ::umask(old_umask);
}

// Issue 27 §6: SQLite says "unable to open database file" for most of these; the message names
// the path and the reason instead, and a FIFO is refused before anything opens it (SQLite
// could block on it).
TEST(SqliteStore, BadPathsGiveAClearError) {
  const std::string dir = FreshTempDir("sqlite");
  {
    std::ofstream garbage(dir + "/garbage.db", std::ios::binary);
    garbage << std::string(8192, 'x');
  }
  std::filesystem::create_directories(dir + "/a_directory");
  ASSERT_EQ(::mkfifo((dir + "/a_fifo").c_str(), 0600), 0);
  { std::ofstream(dir + "/a_file") << "x"; }
  struct Case {
    const char* name;
    std::string path;
    std::string cause;  // part of the message
  };
  const std::vector<Case> cases = {
      {"not a database", dir + "/garbage.db", "not a database"},
      {"missing directory", dir + "/no/such/dir/store.db",
       "cannot be created in " + dir + "/no/such/dir: No such file or directory"},
      {"path is a directory", dir + "/a_directory", "is a directory, not a file"},
      {"path is a FIFO", dir + "/a_fifo", "is a FIFO, not a file"},
      {"parent is a file", dir + "/a_file/store.db", "Not a directory"},
      {"name too long", dir + "/" + std::string(300, 'n') + ".db", "name too long"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto s = SqliteStore::Open(c.path);
    ASSERT_FALSE(s.ok());
    const std::string& msg = s.status().message();
    EXPECT_EQ(msg.rfind("unable to open sqlite db at " + c.path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.cause), std::string::npos) << msg;
  }
}

TEST(SqliteStore, NewerSchemaIsRefused) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO schema_version (version) VALUES (999)", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto s = SqliteStore::Open(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("schema version 999 is newer"), std::string::npos)
      << s.status().message();
}

// Runs `sql` on the file through a plain connection and returns the first column of its first
// row ("" when there is none or it failed).
std::string QueryBehindTheStore(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_stmt* st = nullptr;
  std::string out;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// Issue 27 §6: pointed at another program's SQLite file, the store added its tables to it.
// It is refused, and left exactly as it was (no tables, no WAL mode).
TEST(SqliteStore, AnotherProgramsDatabaseIsRefusedAndLeftUnchanged) {
  const std::string path = FreshTempDir("sqlite") + "/theirs.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE invoices (id INTEGER); CREATE TABLE users (n TEXT)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto s = SqliteStore::Open(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not an aiscale store"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("tables invoices, users"), std::string::npos)
      << s.status().message();
  EXPECT_EQ(QueryBehindTheStore(path, "SELECT COUNT(*) FROM sqlite_master"), "2");
  EXPECT_EQ(QueryBehindTheStore(path, "PRAGMA journal_mode"), "delete");
  // aiscale's own file, and an empty one, open as before.
  const std::string ours = FreshTempDir("sqlite") + "/ours.db";
  ASSERT_TRUE(SqliteStore::Open(ours).ok());
  EXPECT_TRUE(SqliteStore::Open(ours).ok());
}

TEST(SqliteStore, WalModeIsOn) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto mode = (*s)->JournalModeForTest();
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(*mode, "wal");
  ASSERT_TRUE((*s)->Append(FullDecision("w", 1, 0)).ok());
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));
  // WAL is persistent: a plain connection opened later sees it too.
  EXPECT_EQ(QueryBehindTheStore(path, "PRAGMA journal_mode"), "wal");
}

// A new file gets StoreOptions::page_size; a file made before keeps its own and stays usable.
TEST(SqliteStore, PageSizeOfANewFileOnly) {
  struct Case {
    std::string name;
    int create_with;  // StoreOptions::page_size when the file is made
    int reopen_with;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"default", StoreOptions{}.page_size, StoreOptions{}.page_size, "16384"},
      {"SQLite's own", 0, 0, "4096"},
      {"set", 8192, 8192, "8192"},
      {"an older 4 KiB file reopened", 4096, 16384, "4096"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = FreshTempDir("sqlite") + "/store.db";
    StoreOptions o;
    o.page_size = c.create_with;
    {
      auto s = SqliteStore::Open(path, o);
      ASSERT_TRUE(s.ok()) << s.status().message();
      ASSERT_TRUE((*s)->Append(FullDecision("w", 1, 0)).ok());
    }
    o.page_size = c.reopen_with;
    auto s = SqliteStore::Open(path, o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->Append(FullDecision("w", 2, 1)).ok());
    auto recent = (*s)->Recent("w", 10);
    ASSERT_TRUE(recent.ok()) << recent.status().message();
    EXPECT_EQ(recent->size(), 2u);
    EXPECT_EQ(QueryBehindTheStore(path, "PRAGMA page_size"), c.want);
  }
}

// Runs `sql` on the file through a second connection, as another process would.
bool ExecBehindTheStore(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  const bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
                  sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(db);
  return ok;
}

// Issue 27 §6: one corrupt stored decision made Recent fail for good: a restart began at
// min_replicas and the decisions endpoint answered 500 from then on. The row is skipped (and
// counted), the rows around it still read; a corrupt state is still an error.
TEST(SqliteStore, CorruptRowIsSkippedNotAnError) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->Append(FullDecision("w", 10, 0)).ok());
  ASSERT_TRUE(ExecBehindTheStore(path,
                                 "INSERT INTO decisions (workload, t, json, prev) VALUES ('w', 1, "
                                 "'{not json', (SELECT last FROM decision_heads WHERE workload = "
                                 "'w'));"
                                 "UPDATE decision_heads SET last = last_insert_rowid() WHERE "
                                 "workload = 'w';"
                                 "INSERT INTO state (key, json) VALUES ('k', '[1]');"));
  auto got = (*s)->Recent("w", 10);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), 1u);  // the good one, behind the corrupt newest
  EXPECT_EQ(got->back().current, FullDecision("w", 10, 0).current);
  EXPECT_EQ((*s)->Stats().decisions_unreadable, 1);
  auto newest = (*s)->Recent("w", 1);  // what a restart reads
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 1u);
  auto st = (*s)->LoadState("k");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("unable to load state k"), std::string::npos);
}

TEST(SqliteStore, AFailedBatchLeavesNothingBehind) {
  // A trigger makes the third of five inserts fail: the batch reports it, names the workload,
  // and none of its writes (decisions or states, before or after the failure) is kept.
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->Append(FullDecision("before", 0, 0)).ok());
  ASSERT_TRUE(
      ExecBehindTheStore(path,
                         "CREATE TRIGGER boom BEFORE INSERT ON decisions WHEN "
                         "NEW.workload = 'w2' BEGIN SELECT RAISE(ABORT, 'injected'); END;"));
  std::vector<Decision> ds;
  for (int i = 0; i < 5; ++i) ds.push_back(FullDecision("w" + std::to_string(i), 1, i));
  const PersistentState st{{{"x", {1}}}};
  std::vector<StoreWrite> writes;
  for (const auto& d : ds) writes.push_back({&d, {{d.workload + "/policy", &st}}});
  const Status got = (*s)->WriteBatch(writes);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.message().find("append decision for w2"), std::string::npos) << got.message();
  for (const auto& d : ds) {
    SCOPED_TRACE(d.workload);
    auto r = (*s)->Recent(d.workload, 10);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->empty());
    auto loaded = (*s)->LoadState(d.workload + "/policy");
    ASSERT_TRUE(loaded.ok());
    EXPECT_TRUE(loaded->values.empty());
  }
  auto kept = (*s)->Recent("before", 10);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->size(), 1u);
  // The connection is usable again after the rollback.
  EXPECT_TRUE((*s)->Append(FullDecision("after", 2, 2)).ok());
}

// Also with states written once in 1,000 batches: the batch after a failure writes them all.
TEST(SqliteStore, AfterAFailedBatchEverythingIsWrittenAgain) {
  for (const int every : {1, 1000}) {
    SCOPED_TRACE("state_every_ticks " + std::to_string(every));
    const std::string path = FreshTempDir("sqlite") + "/store.db";
    StoreOptions o;
    o.heartbeat = Seconds(300);
    o.state_every_ticks = every;
    auto s = SqliteStore::Open(path, o);
    ASSERT_TRUE(s.ok());
    Decision d0 = FullDecision("w", 0, 0);
    PersistentState s0{{{"x", {0}}}}, s1{{{"x", {1}}}};
    ASSERT_TRUE((*s)->WriteBatch({{&d0, {{"w/policy", &s0}}}}).ok());
    ASSERT_TRUE(ExecBehindTheStore(path,
                                   "CREATE TRIGGER boom BEFORE INSERT ON decisions "
                                   "BEGIN SELECT RAISE(ABORT, 'injected'); END;"));
    Decision d1 = FullDecision("w", 15, 1);  // changed
    ASSERT_FALSE((*s)->WriteBatch({{&d1, {{"w/policy", &s1}}}}).ok());
    ASSERT_TRUE(ExecBehindTheStore(path, "DROP TRIGGER boom;"));
    // The same decision and state again: the store must not believe the failed batch wrote
    // them.
    Decision d2 = d1;
    d2.at += Seconds(15);
    ASSERT_TRUE((*s)->WriteBatch({{&d2, {{"w/policy", &s1}}}}).ok());
    auto got = (*s)->Recent("w", 10);
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(got->size(), 2u);
    EXPECT_EQ(got->back().at, d2.at);
    auto loaded = (*s)->LoadState("w/policy");
    ASSERT_TRUE(loaded.ok());
    EXPECT_EQ(*loaded, s1);
  }
}

TEST(SqliteStore, UnchangedStateIsNotRewritten) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok());
  PersistentState a{{{"x", {1, 2}}}}, b{{{"x", {1, 3}}}};
  for (const PersistentState* st : {&a, &a, &b, &b, &a}) {
    ASSERT_TRUE((*s)->WriteBatch({{nullptr, {{"k", st}}}}).ok());
  }
  const auto stats = (*s)->Stats();
  EXPECT_EQ(stats.states_written, 3);
  EXPECT_EQ(stats.states_skipped, 2);
  auto loaded = (*s)->LoadState("k");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded, a);
}

// A file written by a store of schema version 1 (every decision and state as full JSON) is
// migrated on open and its rows read as before; new rows use the compact forms beside them.
TEST(SqliteStore, ReadsRowsOfTheFormerFormat) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  const Decision old = FullDecision("ns/w", 10, 1);
  PersistentState old_state;
  old_state.values["recs"] = {3, 4, std::numeric_limits<double>::infinity()};
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    auto quote = [](const std::string& s) {
      std::string q = "'";
      for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
      return q + "'";
    };
    const std::string sql = std::string(Migrations().at(0).sql) +
                            "CREATE TABLE schema_version (version INTEGER NOT NULL);"
                            "INSERT INTO schema_version (version) VALUES (1);"
                            "INSERT INTO decisions (workload, t, json) VALUES ('ns/w', " +
                            std::to_string(old.at.time_since_epoch().count()) + ", " +
                            quote(ToJson(old).dump()) +
                            ");INSERT INTO state (key, json) VALUES ('ns/w/policy', " +
                            quote(StateToJson(old_state).dump()) + ");";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const Decision fresh = FullDecision("ns/w", 20, 2);
  ASSERT_TRUE((*s)->Append(fresh).ok());
  auto got = (*s)->Recent("ns/w", 10);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ(ToJson((*got)[0]), ToJson(old));
  EXPECT_EQ((*got)[0].at, old.at);
  EXPECT_EQ(ToJson((*got)[1]), ToJson(fresh));
  auto loaded = (*s)->LoadState("ns/w/policy");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(*loaded, old_state);
  // Overwritten in the new form, read back in it.
  old_state.values["recs"].push_back(5);
  ASSERT_TRUE((*s)->SaveState("ns/w/policy", old_state).ok());
  loaded = (*s)->LoadState("ns/w/policy");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded, old_state);
}

// Retention deletes at most prune_batch + 2 x (rows the write added) per write, so a store that
// gains a retention with a year of rows catches up over many ticks instead of stalling one.
TEST(SqliteStore, PruningIsBoundedPerWrite) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok());
    std::vector<Decision> ds;
    for (int i = 0; i < 100; ++i) ds.push_back(FullDecision("w" + std::to_string(i % 3), i, 0));
    std::vector<StoreWrite> writes;
    for (const Decision& d : ds) writes.push_back({&d, {}});
    ASSERT_TRUE((*s)->WriteBatch(writes).ok());
  }
  StoreOptions o;
  o.retention = Seconds(3600);
  o.prune_batch = 10;
  auto s = SqliteStore::Open(path, o);
  ASSERT_TRUE(s.ok());
  const Decision late = FullDecision("w0", 86400, 0);
  ASSERT_TRUE((*s)->Append(late).ok());
  EXPECT_EQ((*s)->Stats().decisions_pruned, 12);
  ASSERT_TRUE((*s)->Append(FullDecision("w0", 86415, 0)).ok());
  EXPECT_EQ((*s)->Stats().decisions_pruned, 24);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE((*s)->Append(FullDecision("w1", 86430 + i, 0)).ok());
  EXPECT_EQ((*s)->Stats().decisions_pruned, 100);  // all the old ones, none of the new
  auto w0 = (*s)->Recent("w0", 1000);
  ASSERT_TRUE(w0.ok());
  EXPECT_EQ(w0->size(), 2u);
}

}  // namespace
}  // namespace aiscale::store

namespace aiscale::store {
namespace {

int64_t CountRows(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_stmt* st = nullptr;
  int64_t n = -1;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    n = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

// A state that changes a little every batch: a window that moves and a counter.
PersistentState Step(int t) {
  PersistentState s;
  for (int i = std::max(0, t - 20); i <= t; ++i) s.Vec("w").push_back(i * 1.5);
  s.Set("t", t);
  s.Vec("season").assign(600, 0.0);
  s.Vec("season")[static_cast<size_t>(t % 600)] = t;
  return s;
}

// state_every_ticks: each key's state is written in one batch out of N (so a reopened file
// holds a state at most N-1 batches old), at once in a batch whose decision scaled, and in
// full on a flush; every key is due exactly once in any N consecutive batches.
TEST(SqliteStateCadence, EachStateIsWrittenInItsShareOfBatchesAndAtOnceWhenItMatters) {
  struct Case {
    std::string name;
    int every, batches;
    int scaled_at;  // the batch whose decisions scaled every workload, or -1
    bool flush;     // a last batch with StoreWrite::flush
    int64_t written, deferred;
  };
  const std::vector<Case> cases = {
      {"every batch", 1, 8, -1, false, 6 * 8, 0},
      {"one in four", 4, 8, -1, false, 6 * 2, 6 * 6},
      {"one in four, all scaled in the last batch", 4, 8, 7, false, -1, -1},
      {"one in four, then a flush", 4, 9, -1, true, 6 * 2 + 6, 6 * 6},
      {"one in five, uneven", 5, 7, -1, false, -1, -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = FreshTempDir("cadence") + "/store.db";
    StoreOptions o;
    o.state_every_ticks = c.every;
    std::vector<std::string> keys;
    for (int k = 0; k < 6; ++k) keys.push_back("k" + std::to_string(k));
    {
      auto s = SqliteStore::Open(path, o);
      ASSERT_TRUE(s.ok());
      for (int t = 0; t < c.batches; ++t) {
        const PersistentState st = Step(t);
        std::vector<Decision> ds;  // each key's workload decided, and scaled in scaled_at
        for (const std::string& k : keys) {
          ds.push_back(FullDecision("ns/" + k, 15.0 * t, t));
          ds.back().action = t == c.scaled_at ? Action::kScaled : Action::kNone;
        }
        std::vector<StoreWrite> batch(keys.size());
        for (size_t k = 0; k < keys.size(); ++k) {
          batch[k].decision = &ds[k];
          batch[k].states = {{keys[k], &st}};
          batch[k].flush = c.flush && t == c.batches - 1;
        }
        ASSERT_TRUE((*s)->WriteBatch(batch).ok());
      }
      const auto stats = (*s)->Stats();
      if (c.written >= 0) {
        EXPECT_EQ(stats.states_written, c.written);
        EXPECT_EQ(stats.states_deferred, c.deferred);
      }
      EXPECT_EQ(stats.states_written + stats.states_skipped + stats.states_deferred, 6 * c.batches);
    }
    auto s = SqliteStore::Open(path, o);
    ASSERT_TRUE(s.ok());
    for (const std::string& k : keys) {
      SCOPED_TRACE(k);
      auto loaded = (*s)->LoadState(k);
      ASSERT_TRUE(loaded.ok()) << loaded.status().message();
      const int t = static_cast<int>(loaded->Get("t", -1));
      int oldest = std::max(0, c.batches - c.every);
      if (c.flush) oldest = c.batches - 1;
      if (c.scaled_at >= 0) oldest = std::max(oldest, c.scaled_at);
      EXPECT_GE(t, oldest);
      EXPECT_LE(t, c.batches - 1);
      EXPECT_EQ(*loaded, Step(t));  // a state as it was written, not a mix of two
    }
  }
}

// "k<k>", built by appending (GCC 12's -Wrestrict misreads "k" + std::to_string(k)).
std::string KeyName(int k) {
  std::string name = "k";
  name += std::to_string(k);
  return name;
}

// One of the states key k was given (Step(100 k + batch)), bit for bit; `step` when not -1.
// Without a step the key may not have had its turn yet (empty).
void ExpectOwnState(const PersistentState& loaded, int k, int step) {
  if (step < 0 && loaded.values.empty()) return;
  const int got = static_cast<int>(loaded.Get("t", -1));
  ASSERT_GE(got, 0) << "k" << k;
  EXPECT_EQ(got / 100, k) << "another key's state";
  EXPECT_EQ(loaded, Step(got)) << "k" << k << ": not a state it was given";
  if (step >= 0) {
    EXPECT_EQ(got, step) << "k" << k;
  }
}

// WriteBatch finds each key by its place in the batch first (the Controller keeps its order);
// batches in another order, with keys added and dropped, must write each key's own state.
TEST(SqliteStateCadence, BatchesInAnotherOrderWriteEachKeysOwnState) {
  const std::vector<std::vector<int>> orders = {
      {0, 1, 2, 3}, {0, 1, 2, 3}, {1, 0, 3, 2}, {3, 2, 1, 0}, {0, 2}, {2, 0, 1}, {0, 1, 2, 3}};
  for (int every : {1, 3}) {
    SCOPED_TRACE("state_every_ticks " + std::to_string(every));
    const std::string path = FreshTempDir("order") + "/store.db";
    StoreOptions o;
    o.state_every_ticks = every;
    std::map<int, int> last;  // key -> the step of the state it was last given
    {
      auto s = SqliteStore::Open(path, o);
      ASSERT_TRUE(s.ok());
      for (size_t t = 0; t < orders.size(); ++t) {
        std::vector<PersistentState> states;
        states.reserve(orders[t].size());
        std::vector<StoreWrite> batch;
        for (int k : orders[t]) {
          const int step = 100 * k + static_cast<int>(t);  // each key's states its own
          states.push_back(Step(step));
          batch.push_back({nullptr, {{KeyName(k), &states.back()}}, false});
          last[k] = step;
        }
        ASSERT_TRUE((*s)->WriteBatch(batch).ok());
        for (int k : orders[t]) {
          auto loaded = (*s)->LoadState(KeyName(k));
          ASSERT_TRUE(loaded.ok());
          ExpectOwnState(*loaded, k, every == 1 ? last[k] : -1);
        }
      }
    }
    auto s = SqliteStore::Open(path, o);
    ASSERT_TRUE(s.ok());
    for (const auto& [k, step] : last) {
      auto loaded = (*s)->LoadState(KeyName(k));
      ASSERT_TRUE(loaded.ok()) << loaded.status().message();
      ExpectOwnState(*loaded, k, every == 1 ? step : -1);
    }
  }
}

// Schema 3: a state is logged as deltas and snapshotted now and then; the log keeps only what
// some key still needs (at most 2 x state_snapshot_ticks + 16 batches), and a reopened file
// gives back the last state written, at any point.
TEST(SqliteStateLog, DeltasAreLoggedTheLogStaysBoundedAndRestoreIsExact) {
  const std::string path = FreshTempDir("statelog") + "/store.db";
  StoreOptions o;
  o.state_snapshot_ticks = 5;
  for (int stop : {1, 4, 17, 60}) {
    SCOPED_TRACE("stop after " + std::to_string(stop));
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    {
      auto s = SqliteStore::Open(path, o);
      ASSERT_TRUE(s.ok());
      for (int t = 0; t < stop; ++t) {
        const PersistentState a = Step(t), b = Step(t + 1000);
        ASSERT_TRUE((*s)->WriteBatch({{nullptr, {{"a", &a}, {"b", &b}}}}).ok());
        EXPECT_LE(CountRows(path, "SELECT COUNT(*) FROM state_log"),
                  2 * o.state_snapshot_ticks + 16);
      }
      if (stop > 4) {
        const auto st = (*s)->Stats();
        EXPECT_GT(st.state_log_bytes, 0);
        EXPECT_LT(st.states_snapshotted, st.states_written);
      }
      // The same process reads what it wrote.
      auto loaded = (*s)->LoadState("a");
      ASSERT_TRUE(loaded.ok());
      EXPECT_EQ(*loaded, Step(stop - 1));
    }
    auto s = SqliteStore::Open(path, o);
    ASSERT_TRUE(s.ok());
    for (const auto& [key, want] :
         {std::pair{"a", Step(stop - 1)}, std::pair{"b", Step(stop - 1 + 1000)}}) {
      SCOPED_TRACE(key);
      auto loaded = (*s)->LoadState(key);
      ASSERT_TRUE(loaded.ok()) << loaded.status().message();
      EXPECT_EQ(*loaded, want);
    }
    // The first LoadState folded the log into the snapshots.
    EXPECT_EQ(CountRows(path, "SELECT COUNT(*) FROM state_log"), 0);
  }
}

// A file of schema 2 (binary snapshots, no log) is migrated on open: its state reads back and
// then continues as deltas; a file of schema 3 is refused by a binary that knows only 2 (see
// NewerSchemaIsRefused).
TEST(SqliteStateLog, ASchema2FileIsMigratedAndItsStateContinues) {
  const std::string path = FreshTempDir("statelog") + "/store.db";
  const PersistentState old{{{"w", {1, 2, 3}}}};
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    std::string body;
    StateToBytes(old, body);
    const std::string sql = std::string(Migrations().at(0).sql) + Migrations().at(1).sql +
                            "CREATE TABLE schema_version (version INTEGER NOT NULL);"
                            "INSERT INTO schema_version (version) VALUES (1), (2);";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(
        sqlite3_prepare_v2(db, "INSERT INTO state (key, json, fmt, body) VALUES ('k', '', 1, ?1)",
                           -1, &st, nullptr),
        SQLITE_OK);
    sqlite3_bind_blob(st, 1, body.data(), static_cast<int>(body.size()), SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  PersistentState now = old;
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok()) << s.status().message();
    auto loaded = (*s)->LoadState("k");
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    EXPECT_EQ(*loaded, old);
    for (int t = 0; t < 3; ++t) {
      now.Vec("w").push_back(t);
      ASSERT_TRUE((*s)->WriteBatch({{nullptr, {{"k", &now}}}}).ok());
    }
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto v = SchemaVersion(db);
  sqlite3_close(db);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, LatestSchemaVersion());
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok());
  auto loaded = (*s)->LoadState("k");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(*loaded, now);
}

// A file of schema 3 (decisions with AUTOINCREMENT) is migrated on open: every row keeps its
// id, text and time, Recent reads them as before, new rows come after them, and the table no

// Schema 5: Recent walks a workload's chain of rows from its head. A damaged link (to another
// workload's row, to a newer row, to itself, to a row that is gone) ends the walk there; it
// neither loops nor reads another workload's decisions.
TEST(SqliteStore, ADamagedChainEndsRecentWhereItBreaks) {
  struct Case {
    const char* name;
    const char* damage;  // SQL run behind the store; row 1 is ns/other's, rows 2-5 ns/w's
    size_t want;         // decisions Recent gives
  };
  const std::vector<Case> cases = {
      {"intact", "", 4},
      {"a link to another workload", "UPDATE decisions SET prev = 1 WHERE id = 4", 2},
      {"a link to a newer row", "UPDATE decisions SET prev = 5 WHERE id = 4", 2},
      {"a link to itself", "UPDATE decisions SET prev = 4 WHERE id = 4", 2},
      {"a row gone", "DELETE FROM decisions WHERE id = 3", 2},
      {"the head gone", "DELETE FROM decision_heads WHERE workload = 'ns/w'", 0},
      {"the head on another's row", "UPDATE decision_heads SET last = 1 WHERE workload = 'ns/w'",
       0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = FreshTempDir("chain") + "/store.db";
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->Append(FullDecision("ns/other", 0, 4)).ok());
    for (int i = 0; i < 4; ++i) ASSERT_TRUE((*s)->Append(FullDecision("ns/w", 15 * i, i)).ok());
    ASSERT_TRUE(ExecBehindTheStore(path, c.damage));
    auto got = (*s)->Recent("ns/w", 100);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(got->size(), c.want);
    for (const Decision& d : *got) EXPECT_EQ(d.workload, "ns/w");
  }
}
// longer has a sqlite_sequence row to rewrite on each insert.
TEST(SqliteStore, ASchema3FileIsMigratedWithItsDecisionsAsTheyWere) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  std::vector<Decision> old;
  for (int i = 0; i < 5; ++i) old.push_back(FullDecision(i % 2 ? "ns/a" : "ns/b", 10 * i, i));
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    std::string sql =
        "CREATE TABLE schema_version (version INTEGER NOT NULL);"
        "INSERT INTO schema_version (version) VALUES (1), (2), (3);";
    for (int m = 0; m < 3; ++m) sql += Migrations().at(static_cast<size_t>(m)).sql;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "INSERT INTO decisions (id, workload, t, json, fmt) "
                                 "VALUES (?1, ?2, ?3, ?4, 1)",
                                 -1, &st, nullptr),
              SQLITE_OK);
    for (size_t i = 0; i < old.size(); ++i) {
      const std::string text = DecisionToCompact(old[i]);
      sqlite3_bind_int64(st, 1, static_cast<int64_t>(100 + 7 * i));  // gaps, as after trims
      sqlite3_bind_text(st, 2, old[i].workload.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(st, 3, old[i].at.time_since_epoch().count());
      sqlite3_bind_text(st, 4, text.c_str(), -1, SQLITE_TRANSIENT);
      ASSERT_EQ(sqlite3_step(st), SQLITE_DONE) << sqlite3_errmsg(db);
      sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const Decision fresh = FullDecision("ns/a", 100, 9);
  ASSERT_TRUE((*s)->Append(fresh).ok());
  for (const char* w : {"ns/a", "ns/b"}) {
    SCOPED_TRACE(w);
    auto got = (*s)->Recent(w, 10);
    ASSERT_TRUE(got.ok()) << got.status().message();
    std::vector<Decision> want;
    for (const Decision& d : old) {
      if (d.workload == w) want.push_back(d);
    }
    if (fresh.workload == w) want.push_back(fresh);
    ASSERT_EQ(got->size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(ToJson((*got)[i]), ToJson(want[i]));
      EXPECT_EQ((*got)[i].at, want[i].at);
    }
  }
  s->reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto v = SchemaVersion(db);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, LatestSchemaVersion());
  struct Query {
    const char* sql;
    std::string want;
  };
  const std::vector<Query> queries = {
      {"SELECT group_concat(id) FROM (SELECT id FROM decisions ORDER BY id)",
       "100,107,114,121,128,129"},
      {"SELECT instr(sql, 'AUTOINCREMENT') FROM sqlite_master WHERE name = 'decisions'", "0"},
      {"SELECT count(*) FROM sqlite_master WHERE name IN ('decisions_by_workload', "
       "'decisions_by_time', 'decisions_v4', 'decision_heads')",
       "2"},
      // Schema 5: each row links to its workload's row before it, the heads to the newest.
      {"SELECT group_concat(id || ':' || ifnull(prev, '-')) FROM "
       "(SELECT id, prev FROM decisions ORDER BY id)",
       "100:-,107:-,114:100,121:107,128:114,129:121"},
      {"SELECT group_concat(workload || ':' || last) FROM "
       "(SELECT * FROM decision_heads ORDER BY workload)",
       "ns/a:129,ns/b:128"},
  };
  for (const Query& q : queries) {
    SCOPED_TRACE(q.sql);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, q.sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    EXPECT_EQ(std::string(text ? text : ""), q.want);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
}

TEST(SqliteStateLog, EdgeCasesOfTheLogRestoreTheLastCommittedState) {
  struct Case {
    std::string name;
    std::vector<std::vector<int>> batches;  // per batch, the Step() of key "k" in order
    int fail_after = -1;                    // batches before one that fails (-1: none)
    int want;                               // the Step() a reopened file and the store read
  };
  const std::vector<Case> cases = {
      {"a key twice in a batch, first write of it", {{0, 1}, {2}}, -1, 2},
      {"a key twice in a batch after deltas", {{0}, {1}, {2, 3}, {4, 5}}, -1, 5},
      {"a failed batch after deltas", {{0}, {1}, {2}, {3}}, 3, 2},
      {"a failed batch, then more deltas", {{0}, {1}, {2}, {3}, {4}, {5}}, 3, 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = FreshTempDir("statelog") + "/store.db";
    {
      auto s = SqliteStore::Open(path);
      ASSERT_TRUE(s.ok());
      for (size_t b = 0; b < c.batches.size(); ++b) {
        const bool fail = static_cast<int>(b) == c.fail_after;
        if (fail) {
          ASSERT_TRUE(ExecBehindTheStore(path,
                                         "CREATE TRIGGER boom BEFORE INSERT ON decisions "
                                         "BEGIN SELECT RAISE(ABORT, 'injected'); END;"));
        }
        std::vector<PersistentState> states;
        for (int t : c.batches[b]) states.push_back(Step(t));
        const Decision d = FullDecision("w", static_cast<double>(b), static_cast<int>(b));
        StoreWrite w{&d, {}};
        for (const PersistentState& st : states) w.states.push_back({"k", &st});
        EXPECT_EQ((*s)->WriteBatch({w}).ok(), !fail);
        if (fail) {
          ASSERT_TRUE(ExecBehindTheStore(path, "DROP TRIGGER boom;"));
          // Right after the failure, the same process reads the last committed state.
          auto loaded = (*s)->LoadState("k");
          ASSERT_TRUE(loaded.ok()) << loaded.status().message();
          EXPECT_EQ(*loaded, Step(c.batches[b - 1].back()));
        }
      }
      auto loaded = (*s)->LoadState("k");
      ASSERT_TRUE(loaded.ok()) << loaded.status().message();
      EXPECT_EQ(*loaded, Step(c.want));
    }
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok());
    auto loaded = (*s)->LoadState("k");
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    EXPECT_EQ(*loaded, Step(c.want));
  }
}

TEST(SqliteStateLog, ACorruptLogRowIsAnErrorNotACrash) {
  const std::string path = FreshTempDir("statelog") + "/store.db";
  {
    auto s = SqliteStore::Open(path);
    ASSERT_TRUE(s.ok());
    const PersistentState a = Step(0);
    ASSERT_TRUE((*s)->WriteBatch({{nullptr, {{"k", &a}}}}).ok());
  }
  ASSERT_TRUE(
      ExecBehindTheStore(path, "INSERT INTO state_log (seq, body) VALUES (999, X'016B05010203');"));
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok());
  auto loaded = (*s)->LoadState("k");
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("state log"), std::string::npos)
      << loaded.status().message();
  // Nothing was folded: the log is still there for a fixed binary or a person to look at.
  EXPECT_EQ(CountRows(path, "SELECT COUNT(*) FROM state_log"), 1);
}

}  // namespace
}  // namespace aiscale::store
