// SqliteStore: the durable Store, one SQLite file in WAL mode.
//
// Why WAL: the API server reads decisions while the controller writes them, and WAL lets
// readers run beside one writer. The schema lives in migrations.cc and is brought up to date
// on Open. Decisions and state are stored as the JSON of decision_codec.h, one row each.
// Append (with its retention trim) and SaveState are each one transaction, and WriteBatch is
// one for a whole tick, durable when they return ok (see StoreOptions::sync_every_commit). Errors
// read "unable to open sqlite db at PATH: cause". Thread-safe: one mutex around the connection.
//
//   auto store = SqliteStore::Open("/var/lib/aiscale/store.db", {});
//   if (!store.ok()) return store.status();
#pragma once

#include <sqlite3.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/store.h"
#include "store/store_options.h"

namespace aiscale::store {

class SqliteStore final : public Store {
 public:
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   StoreOptions options = {});
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  Status Append(const Decision& d) override;
  Result<std::vector<Decision>> Recent(const std::string& workload, size_t n) override;
  Result<PersistentState> LoadState(const std::string& key) override;
  Status SaveState(const std::string& key, const PersistentState& state) override;
  Status WriteBatch(const std::vector<StoreWrite>& writes) override;

  const std::string& path() const { return path_; }
  // The journal mode the connection reports ("wal" once open).
  Result<std::string> JournalModeForTest();

 private:
  SqliteStore(std::string path, StoreOptions options, sqlite3* db)
      : path_(std::move(path)), options_(options), db_(db) {}
  Status Prepare();
  Status Error(const std::string& what) const;  // "unable to WHAT in sqlite db at P: errmsg"
  // Steps of a transaction; the caller holds mu_ and has begun it.
  Status InsertLocked(const Decision& d);
  Status SaveLocked(const std::string& key, const PersistentState& state);
  // BEGIN, body, COMMIT; ROLLBACK when either fails. The caller holds mu_.
  template <typename Body>
  Status TransactionLocked(const std::string& what, Body body);

  const std::string path_;
  const StoreOptions options_;
  std::mutex mu_;
  sqlite3* db_ = nullptr;  // GUARDED_BY(mu_)
  // Prepared once; reset after each use. GUARDED_BY(mu_)
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* trim_ = nullptr;
  sqlite3_stmt* recent_ = nullptr;
  sqlite3_stmt* load_ = nullptr;
  sqlite3_stmt* save_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
};

}  // namespace aiscale::store
