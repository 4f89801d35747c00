#include "store/migrations.h"

#include <set>
#include <string>
#include <vector>

namespace aiscale::store {
namespace {

Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return Status::Error(msg);
  }
  return Status::Ok();
}

}  // namespace

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> kMigrations = {
      {1,
       "CREATE TABLE decisions ("
       "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
       "  workload TEXT NOT NULL,"
       "  t INTEGER NOT NULL,"  // TimePoint, ns since the clock's epoch
       "  json TEXT NOT NULL);"
       "CREATE INDEX decisions_by_workload ON decisions (workload, id);"
       "CREATE TABLE state ("
       "  key TEXT PRIMARY KEY,"
       "  json TEXT NOT NULL);"},
      // Compact storage (issue 11). `fmt` says how a row's payload is encoded, so rows written
      // before stay readable. decisions: `json` holds decision_codec's ToJson (fmt 0) or its
      // compact JSON (fmt 1). state: `json` holds StateToJson (fmt 0), or `body` holds
      // StateToBytes (fmt 1, `json` empty). The time index serves retention's oldest-first
      // delete.
      {2,
       "ALTER TABLE decisions ADD COLUMN fmt INTEGER NOT NULL DEFAULT 0;"
       "CREATE INDEX decisions_by_time ON decisions (t);"
       "ALTER TABLE state ADD COLUMN fmt INTEGER NOT NULL DEFAULT 0;"
       "ALTER TABLE state ADD COLUMN body BLOB;"},
      // State as snapshots plus a delta log (issue 11 §4, store format 2): `seq` is the last
      // state_log row a snapshot includes; each state_log row holds, for every state a batch
      // changed, its key and its delta (state_delta.h) from the state as of the row before.
      // Older files migrate with seq 0 and an empty log, which is what they mean.
      {3,
       "ALTER TABLE state ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;"
       "CREATE TABLE state_log (seq INTEGER PRIMARY KEY, body BLOB NOT NULL);"},
      // decisions without AUTOINCREMENT (issue 11 §4): its sqlite_sequence row was read and
      // rewritten by every insert. A new row's id is still larger than every id in the table
      // (SQLite's rowid choice), which is all Recent and the trims rely on; ids of deleted rows
      // may come back, and nothing outside the table refers to one. Older files are copied
      // over once, rows, ids and indexes as they were.
      {4,
       "CREATE TABLE decisions_v4 ("
       "  id INTEGER PRIMARY KEY,"
       "  workload TEXT NOT NULL,"
       "  t INTEGER NOT NULL,"
       "  json TEXT NOT NULL,"
       "  fmt INTEGER NOT NULL DEFAULT 0);"
       "INSERT INTO decisions_v4 (id, workload, t, json, fmt)"
       "  SELECT id, workload, t, json, fmt FROM decisions;"
       "DROP TABLE decisions;"
       "ALTER TABLE decisions_v4 RENAME TO decisions;"
       "CREATE INDEX decisions_by_workload ON decisions (workload, id);"
       "CREATE INDEX decisions_by_time ON decisions (t);"},
      // Each workload's decisions as a chain (issue 11 §4): a row's `prev` is the id of the same
      // workload's row before it, decision_heads holds each workload's newest id, and the
      // (workload, id) index goes. Recent walks the chain. The index put every row of a tick
      // into a random leaf: 1,744 decisions of 10,000 workloads dirtied 421 pages of 16 KiB at
      // 220,000 rows and 1,465 (24 MB of WAL a tick) at 2 M; the chain adds a row at the end of
      // the table and updates a head in a table of one small row per workload: 85 and 86 pages
      // (scripts/wal_pages.py). Older files get their chains from the index before it is
      // dropped (once, O(n log n)).
      {5,
       "ALTER TABLE decisions ADD COLUMN prev INTEGER;"
       "UPDATE decisions SET prev = (SELECT MAX(o.id) FROM decisions o"
       "  WHERE o.workload = decisions.workload AND o.id < decisions.id);"
       "CREATE TABLE decision_heads (workload TEXT PRIMARY KEY, last INTEGER NOT NULL)"
       "  WITHOUT ROWID;"
       "INSERT INTO decision_heads (workload, last)"
       "  SELECT workload, MAX(id) FROM decisions GROUP BY workload;"
       "DROP INDEX decisions_by_workload;"},
  };
  return kMigrations;
}

int LatestSchemaVersion() { return Migrations().back().version; }

Result<int> SchemaVersion(sqlite3* db) {
  RETURN_IF_ERROR(Exec(db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
                      .Wrap("unable to create schema_version"));
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT MAX(version) FROM schema_version", -1, &st, nullptr) !=
      SQLITE_OK) {
    return Status::Error(std::string("unable to read schema_version: ") + sqlite3_errmsg(db));
  }
  int version = 0;
  const int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
    version = sqlite3_column_int(st, 0);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    return Status::Error(std::string("unable to read schema_version: ") + sqlite3_errmsg(db));
  }
  return version;
}

Status CheckOwnDatabase(sqlite3* db) {
  // Every table any migration creates, transient ones included.
  static const std::set<std::string> kOurs = {"schema_version", "decisions", "decisions_v4",
                                              "state",          "state_log", "decision_heads"};
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                         "'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                         -1, &st, nullptr) != SQLITE_OK) {
    return Status::Invalid(std::string("unable to read the file's tables: ") + sqlite3_errmsg(db));
  }
  std::vector<std::string> foreign;
  bool versioned = false, any = false;
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    const std::string name = t ? t : "";
    any = true;
    if (name == "schema_version") versioned = true;
    if (!kOurs.count(name)) foreign.push_back(name);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    return Status::Invalid(std::string("unable to read the file's tables: ") + sqlite3_errmsg(db));
  }
  if (!any || (versioned && foreign.empty())) return Status::Ok();
  std::string names;
  for (size_t i = 0; i < foreign.size() && i < 5; ++i) names += (i ? ", " : "") + foreign[i];
  if (foreign.size() > 5) names += ", ...";
  return Status::Invalid(
      "not an aiscale store: it is another program's SQLite database (" +
      (foreign.empty() ? std::string("no schema_version table") : "tables " + names) +
      "); it was left unchanged: point store at a file of aiscale's own");
}

Status ApplyMigrations(sqlite3* db) {
  // IMMEDIATE: two processes opening one new file must not both migrate it.
  RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE").Wrap("unable to start migration"));
  auto fail = [db](Status st) {
    Exec(db, "ROLLBACK");
    return st;
  };
  auto version = SchemaVersion(db);
  if (!version.ok()) return fail(version.status());
  if (*version > LatestSchemaVersion()) {
    return fail(Status::Error("schema version " + std::to_string(*version) +
                              " is newer than this aiscale supports (" +
                              std::to_string(LatestSchemaVersion()) + ")"));
  }
  for (const Migration& m : Migrations()) {
    if (m.version <= *version) continue;
    Status st = Exec(db, m.sql);
    if (st.ok()) {
      st = Exec(db,
                ("INSERT INTO schema_version (version) VALUES (" + std::to_string(m.version) + ")")
                    .c_str());
    }
    if (!st.ok()) {
      return fail(st.Wrap("unable to apply migration " + std::to_string(m.version)));
    }
  }
  return Exec(db, "COMMIT").Wrap("unable to commit migrations");
}

}  // namespace aiscale::store
