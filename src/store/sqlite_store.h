// SqliteStore: the durable Store, one SQLite file in WAL mode.
//
// Why WAL: the API server reads decisions while the controller writes them, and WAL lets
// readers run beside one writer. The schema lives in migrations.cc and is brought up to date
// on Open. A decision is stored when it changed, plus heartbeats (StoreOptions::heartbeat,
// change_filter.h), in decision_codec.h's compact JSON, in a table whose ids are plain rowids
// (schema 4: no AUTOINCREMENT, so no sqlite_sequence write per row) and whose rows chain each
// workload's decisions (schema 5: a row's `prev`, the newest in decision_heads; Recent and
// keep_last walk the chain, so an insert touches the table's end and one head, not a random
// index leaf). State (schema 3) is a
// full snapshot per key in its binary form plus a log with one row per WriteBatch holding the
// deltas (state_delta.h) of every state that changed in it: a key is snapshotted again when
// the deltas logged since its snapshot would outgrow it (and a 4 KiB page), or after
// StoreOptions::state_snapshot_ticks batches (staggered per key, at most twice that), and log
// rows no key needs are deleted every 16th batch. With StoreOptions::state_every_ticks above 1
// a state is written only in its share of the batches (and at once when its workload scaled,
// the write says flush, or the write before failed). A restore gives back the last state
// written, bit for bit: the first LoadState folds the log into the snapshots (a reader that
// never calls LoadState, such as `aiscale explain`, writes nothing). Rows of the older JSON
// format are read as before (the `fmt` column). Decisions past StoreOptions::retention are
// deleted a bounded batch per write. WAL checkpoints run on a thread of their own
// (wal_checkpointer.h), so no commit waits for one.
// Append (with its trims) and SaveState are each one transaction, and WriteBatch is one for a
// whole tick, durable when they return ok (see StoreOptions::sync_every_commit); after a failed
// one, the next write stores every decision and state again. Errors read "unable to open
// sqlite db at PATH: cause". Thread-safe: one mutex around the connection.
//
//   auto store = SqliteStore::Open("/var/lib/aiscale/store.db", {});
//   if (!store.ok()) return store.status();
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/store.h"
#include "store/change_filter.h"
#include "store/position_cache.h"
#include "store/store_options.h"
#include "store/wal_checkpointer.h"

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
  // What the writes so far did with what they were given (for benchmarks and /metrics).
  struct WriteStats {
    int64_t decisions_written = 0, decisions_skipped = 0;
    int64_t states_written = 0, states_skipped = 0;
    int64_t states_snapshotted = 0;  // of states_written, as a full snapshot
    int64_t states_deferred = 0;     // not due in their batch (state_every_ticks)
    int64_t state_log_bytes = 0;     // delta bytes logged
    int64_t decisions_pruned = 0;
    int64_t decisions_unreadable = 0;  // corrupt rows Recent skipped
    // Background checkpoints (StoreOptions::checkpoint_in_background) done and failed; when the
    // thread could not start, why (SQLite's automatic checkpoint runs instead).
    int64_t checkpoints = 0, checkpoint_failures = 0;
    std::string checkpoint_error;
  };
  WriteStats Stats();
  // The database's size in bytes as this connection sees it (pages in the WAL included).
  Result<int64_t> SizeBytes();
  // The journal mode the connection reports ("wal" once open).
  Result<std::string> JournalModeForTest();

 private:
  SqliteStore(std::string path, StoreOptions options, sqlite3* db)
      : path_(std::move(path)), options_(options), db_(db), filter_(options.heartbeat) {}
  Status Prepare();
  // Hands checkpoints to a WalCheckpointer when the options ask and the path is a file.
  void StartCheckpointer();
  // sqlite3_wal_hook: called after each commit with the WAL's size in pages.
  static int WalHook(void* self, sqlite3* db, const char* name, int pages);
  Status Error(const std::string& what) const;  // "unable to WHAT in sqlite db at P: errmsg"
  // Steps of a transaction; the caller holds mu_ and has begun it.
  // Stores d when the filter's offer `o` keeps it; adds the rows written to `inserted`.
  Status RecordLocked(const Decision& d, const ChangeFilter::Offer& o, size_t& inserted);
  // Inserts d's row with `json`, its compact form, and moves its workload's head.
  Status InsertLocked(const Decision& d, const std::string& json);
  // Steps row_ at `id` (the caller resets it): true when it is one of workload's rows, false
  // when the chain ends there (the row gone, or another workload's).
  Result<bool> ChainRowLocked(const std::string& workload, int64_t id);
  // The older row the link of the row in row_ names; 0 when none.
  int64_t ChainPrev(int64_t id) const;
  // The id of the row before `id` in workload's chain (0: none), or nullopt when row `id` is
  // gone or not the workload's.
  Result<std::optional<int64_t>> PrevLocked(const std::string& workload, int64_t id);
  // Deletes all but the newest StoreOptions::keep_last rows of the chain from `newest`.
  Status TrimLocked(const std::string& workload, int64_t newest);
  struct Saved;
  // Logs the delta of `state` from what was last written for `key` (`saved`: what that was,
  // null before the first write, which sets it) into log_buf_, or writes a full snapshot at
  // `seq` (see the class comment).
  Status StageStateLocked(const std::string& key, const PersistentState& state, int64_t seq,
                          Saved*& saved);
  // What WriteBatch remembers of the key at a position in its batches (position_cache.h).
  struct StateHint {
    Saved* saved = nullptr;  // null: not written yet
    int64_t due_offset = 0;  // the key's turn in StoreOptions::state_every_ticks
  };
  StateHint HintFor(const std::string& key);
  // Whether batch number `batch` writes the hinted key's state.
  bool StateDue(const StateHint& h, int64_t batch) const;
  // Writes `state` in full for `key`: updates `saved` or, when null, inserts the key's row and
  // entry. Returns the entry.
  Result<Saved*> SnapshotLocked(const std::string& key, const PersistentState& state, int64_t seq,
                                Saved* saved);
  // Inserts or replaces key's snapshot row; returns its rowid.
  Result<int64_t> UpsertStateLocked(const std::string& key, std::string_view body, int64_t seq);
  // Writes log_buf_ as row `seq` and deletes the rows no key needs any more.
  Status WriteLogLocked(int64_t seq);
  // Replays the whole log into snapshots and empties it (a transaction of its own).
  Status CompactLocked();
  // A key's row: the state it holds (without the log) and its snapshot seq.
  struct Snapshot {
    PersistentState state;
    int64_t seq = 0;
  };
  Result<Snapshot> ReadSnapshotLocked(const std::string& key);
  // Deletes decisions older than `newest` - retention, at most a batch (see StoreOptions).
  Status PruneLocked(TimePoint newest, size_t inserted);
  // After a failed transaction: what the filters remember may not be in the file.
  void ForgetLocked();
  // BEGIN, body, COMMIT; ROLLBACK when either fails. The caller holds mu_.
  template <typename Body>
  Status TransactionLocked(const std::string& what, Body body);

  const std::string path_;
  const StoreOptions options_;
  std::mutex mu_;
  sqlite3* db_ = nullptr;  // GUARDED_BY(mu_)
  // Prepared once; reset after each use. GUARDED_BY(mu_)
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* head_ = nullptr;
  sqlite3_stmt* head_of_ = nullptr;
  sqlite3_stmt* row_ = nullptr;
  sqlite3_stmt* delete_row_ = nullptr;
  sqlite3_stmt* prune_ = nullptr;
  sqlite3_stmt* load_ = nullptr;
  sqlite3_stmt* save_ = nullptr;
  sqlite3_stmt* update_ = nullptr;
  sqlite3_stmt* log_insert_ = nullptr;
  sqlite3_stmt* log_prune_ = nullptr;
  sqlite3_stmt* log_scan_ = nullptr;
  sqlite3_stmt* log_clear_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
  ChangeFilter filter_;  // GUARDED_BY(mu_)
  // What this store last wrote for a key.
  struct Saved {
    int64_t rowid = 0;
    PersistentState state;    // its snapshot with every delta logged since applied
    int64_t snap_seq = 0;     // the log seq its snapshot includes
    size_t snap_bytes = 0;    // that snapshot's size
    size_t logged_bytes = 0;  // delta bytes logged since it
    int64_t stagger = 0;      // 0..state_snapshot_ticks-1, from the key's hash
  };
  std::unordered_map<std::string, Saved> saved_;  // node-based: Saved* stay valid. GUARDED_BY(mu_)
  PositionCache<StateHint> state_hints_;          // into saved_. GUARDED_BY(mu_)
  // The last log seq used (a batch with state takes the next); log rows and snapshots carry it.
  int64_t seq_ = 0;      // GUARDED_BY(mu_)
  int64_t batches_ = 0;  // WriteBatch calls so far: the state cadence's clock. GUARDED_BY(mu_)
  // After a failed write the next batch writes every state, due or not. GUARDED_BY(mu_)
  bool write_all_states_ = false;
  // The log may hold deltas of keys not in saved_ (written before Open, or before a failed
  // write): fold it into the snapshots before a LoadState reads them, and prune nothing.
  bool needs_compaction_ = false;                  // GUARDED_BY(mu_)
  std::string buf_, log_buf_, delta_buf_;          // GUARDED_BY(mu_)
  std::string decision_buf_;                       // GUARDED_BY(mu_)
  WriteStats stats_;                               // GUARDED_BY(mu_)
  std::unique_ptr<WalCheckpointer> checkpointer_;  // null: SQLite checkpoints in the commit
};

}  // namespace aiscale::store
