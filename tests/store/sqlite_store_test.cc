// SqliteStore beyond the shared suite: restarts, bad paths and files, WAL, migrations.
#include "store/sqlite_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

TEST(SqliteStore, BadPathsGiveAClearError) {
  const std::string dir = FreshTempDir("sqlite");
  {
    std::ofstream garbage(dir + "/garbage.db", std::ios::binary);
    garbage << std::string(8192, 'x');
  }
  std::filesystem::create_directories(dir + "/a_directory");
  struct Case {
    const char* name;
    std::string path;
    const char* cause;  // part of SQLite's message we expect to be passed on
  };
  const std::vector<Case> cases = {
      {"not a database", dir + "/garbage.db", "not a database"},
      {"missing directory", dir + "/no/such/dir/store.db", "unable to open database file"},
      {"path is a directory", dir + "/a_directory", "unable to open database file"},
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
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// Runs `sql` on the file through a second connection, as another process would.
bool ExecBehindTheStore(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  const bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
                  sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(db);
  return ok;
}

TEST(SqliteStore, CorruptRowIsAnErrorNotACrash) {
  const std::string path = FreshTempDir("sqlite") + "/store.db";
  auto s = SqliteStore::Open(path);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(ExecBehindTheStore(path,
                                 "INSERT INTO decisions (workload, t, json) VALUES ('w', 1, "
                                 "'{not json');"
                                 "INSERT INTO state (key, json) VALUES ('k', '[1]');"));
  auto got = (*s)->Recent("w", 10);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("not valid JSON"), std::string::npos);
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

}  // namespace
}  // namespace aiscale::store
