#include "store/sqlite_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/decision_codec.h"
#include "store/migrations.h"

namespace aiscale::store {
namespace {

// Resets a prepared statement when the scope ends, whatever path returns.
class Reset {
 public:
  explicit Reset(sqlite3_stmt* st) : st_(st) {}
  ~Reset() {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
  }

 private:
  sqlite3_stmt* st_;
};

void BindText(sqlite3_stmt* st, int i, const std::string& s) {
  sqlite3_bind_text(st, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

std::string ColumnText(sqlite3_stmt* st, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st, i))) : std::string();
}

Result<std::string> QueryText(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
    return Status::Error(sqlite3_errmsg(db));
  }
  std::string out;
  const int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) out = ColumnText(st, 0);
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Status::Error(sqlite3_errmsg(db));
  return out;
}

// Creates the file 0600 when it does not exist yet: decisions and learned state are the
// operator's, not every local user's. SQLite gives its -wal and -shm files the database file's
// mode, so they follow. An existing file keeps its mode. When the file cannot be created
// (missing directory, ...) SQLite's own open fails next with the error the user sees. Special
// names (":memory:", "file:" URIs, "") are left to SQLite.
void CreatePrivate(const std::string& path) {
  if (path.empty() || path[0] == ':' || path.rfind("file:", 0) == 0) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
}

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       StoreOptions options) {
  const std::string context = "unable to open sqlite db at " + path;
  CreatePrivate(path);
  sqlite3* db = nullptr;
  // NOMUTEX: the store's own mutex serializes every use of the connection.
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string cause = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::Error(context + ": " + cause);
  }
  std::unique_ptr<SqliteStore> s(new SqliteStore(path, options, db));
  sqlite3_busy_timeout(db, 5000);
  // The first statement reads the file: a corrupt or foreign file fails here.
  auto mode = QueryText(db, "PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status().Wrap(context);
  if (*mode != "wal") {
    return Status::Error(context + ": cannot enable WAL mode (journal_mode is " + *mode + ")");
  }
  auto sync = QueryText(
      db, options.sync_every_commit ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  if (!sync.ok()) return sync.status().Wrap(context);
  RETURN_IF_ERROR(ApplyMigrations(db).Wrap(context));
  RETURN_IF_ERROR(s->Prepare().Wrap(context));
  return s;
}

SqliteStore::~SqliteStore() {
  for (sqlite3_stmt* st : {insert_, trim_, recent_, load_, save_, begin_, commit_, rollback_}) {
    sqlite3_finalize(st);
  }
  sqlite3_close(db_);
}

Status SqliteStore::Prepare() {
  const std::pair<sqlite3_stmt**, const char*> stmts[] = {
      {&insert_, "INSERT INTO decisions (workload, t, json) VALUES (?1, ?2, ?3)"},
      // Deletes all but the newest ?2 rows of one workload; a no-op when there are fewer.
      {&trim_,
       "DELETE FROM decisions WHERE workload = ?1 AND id <= (SELECT id FROM decisions "
       "WHERE workload = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)"},
      {&recent_, "SELECT t, json FROM decisions WHERE workload = ?1 ORDER BY id DESC LIMIT ?2"},
      {&load_, "SELECT json FROM state WHERE key = ?1"},
      {&save_, "INSERT OR REPLACE INTO state (key, json) VALUES (?1, ?2)"},
      {&begin_, "BEGIN IMMEDIATE"},
      {&commit_, "COMMIT"},
      {&rollback_, "ROLLBACK"},
  };
  for (const auto& [out, sql] : stmts) {
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, out, nullptr) != SQLITE_OK) {
      return Status::Error(std::string("unable to prepare '") + sql + "': " + sqlite3_errmsg(db_));
    }
  }
  return Status::Ok();
}

Status SqliteStore::Error(const std::string& what) const {
  return Status::Error("unable to " + what + " in sqlite db at " + path_ + ": " +
                       sqlite3_errmsg(db_));
}

template <typename Body>
Status SqliteStore::TransactionLocked(const std::string& what, Body body) {
  {
    Reset r(begin_);
    if (sqlite3_step(begin_) != SQLITE_DONE) return Error("begin " + what);
  }
  Status st = body();
  if (st.ok()) {
    Reset r(commit_);
    if (sqlite3_step(commit_) == SQLITE_DONE) return Status::Ok();
    st = Error("commit " + what);
  }
  Reset r(rollback_);
  sqlite3_step(rollback_);
  return st;
}

Status SqliteStore::InsertLocked(const Decision& d) {
  const std::string json = ToJson(d).dump();
  {
    Reset r(insert_);
    BindText(insert_, 1, d.workload);
    sqlite3_bind_int64(insert_, 2, d.at.time_since_epoch().count());
    BindText(insert_, 3, json);
    if (sqlite3_step(insert_) != SQLITE_DONE) return Error("append decision for " + d.workload);
  }
  if (options_.keep_last > 0) {
    Reset r(trim_);
    BindText(trim_, 1, d.workload);
    sqlite3_bind_int64(trim_, 2, static_cast<int64_t>(options_.keep_last));
    if (sqlite3_step(trim_) != SQLITE_DONE) return Error("trim decisions of " + d.workload);
  }
  return Status::Ok();
}

Status SqliteStore::SaveLocked(const std::string& key, const PersistentState& state) {
  const std::string json = StateToJson(state).dump();
  Reset r(save_);
  BindText(save_, 1, key);
  BindText(save_, 2, json);
  if (sqlite3_step(save_) != SQLITE_DONE) return Error("save state " + key);
  return Status::Ok();
}

Status SqliteStore::Append(const Decision& d) {
  std::lock_guard<std::mutex> lock(mu_);
  return TransactionLocked("append of " + d.workload, [&] { return InsertLocked(d); });
}

Status SqliteStore::WriteBatch(const std::vector<StoreWrite>& writes) {
  std::lock_guard<std::mutex> lock(mu_);
  return TransactionLocked("a batch of " + std::to_string(writes.size()) + " writes", [&] {
    for (const StoreWrite& w : writes) {
      if (w.decision) RETURN_IF_ERROR(InsertLocked(*w.decision));
      for (const auto& [key, state] : w.states) RETURN_IF_ERROR(SaveLocked(key, *state));
    }
    return Status::Ok();
  });
}

Result<std::vector<Decision>> SqliteStore::Recent(const std::string& workload, size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  Reset r(recent_);
  BindText(recent_, 1, workload);
  // LIMIT -1 is SQLite's "no limit".
  const int64_t limit =
      n > static_cast<size_t>(std::numeric_limits<int64_t>::max()) ? -1 : static_cast<int64_t>(n);
  sqlite3_bind_int64(recent_, 2, limit);
  std::vector<Decision> out;
  int rc;
  while ((rc = sqlite3_step(recent_)) == SQLITE_ROW) {
    const int64_t t = sqlite3_column_int64(recent_, 0);
    auto j = nlohmann::json::parse(ColumnText(recent_, 1), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      return Status::Error("unable to read decisions of " + workload + " in sqlite db at " + path_ +
                           ": a row is not valid JSON");
    }
    auto d = DecisionFromJson(j);
    if (!d.ok()) {
      return d.status().Wrap("unable to read decisions of " + workload + " in sqlite db at " +
                             path_);
    }
    // The integer column is exact; the JSON's seconds may be rounded.
    d->at = TimePoint(Duration(t));
    out.push_back(std::move(d).value());
  }
  if (rc != SQLITE_DONE) return Error("read decisions of " + workload);
  std::reverse(out.begin(), out.end());
  return out;
}

Result<PersistentState> SqliteStore::LoadState(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  Reset r(load_);
  BindText(load_, 1, key);
  const int rc = sqlite3_step(load_);
  if (rc == SQLITE_DONE) return PersistentState{};
  if (rc != SQLITE_ROW) return Error("load state " + key);
  auto j = nlohmann::json::parse(ColumnText(load_, 0), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::Error("unable to load state " + key + " in sqlite db at " + path_ +
                         ": not valid JSON");
  }
  auto s = StateFromJson(j);
  if (!s.ok()) return s.status().Wrap("unable to load state " + key + " in sqlite db at " + path_);
  return s;
}

Status SqliteStore::SaveState(const std::string& key, const PersistentState& state) {
  std::lock_guard<std::mutex> lock(mu_);
  return SaveLocked(key, state);
}

Result<std::string> SqliteStore::JournalModeForTest() {
  std::lock_guard<std::mutex> lock(mu_);
  return QueryText(db_, "PRAGMA journal_mode");
}

}  // namespace aiscale::store
