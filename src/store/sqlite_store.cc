#include "store/sqlite_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <utility>

#include "core/decision_codec.h"
#include "store/migrations.h"
#include "store/state_delta.h"
#include "store/store_path.h"

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

// A decisions row: fmt 1 is the compact JSON, 0 the full JSON of rows from before it (whose
// seconds may be rounded: the integer column `t` is exact and wins).
Result<Decision> DecodeDecision(const std::string& text, int fmt, const std::string& workload,
                                TimePoint t) {
  if (fmt == 1) return DecisionFromCompact(text, workload, t);
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Error("a row is not valid JSON");
  ASSIGN_OR_RETURN(Decision d, DecisionFromJson(j));
  d.at = t;
  return d;
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

// A file name, not one of SQLite's special names (":memory:", "file:" URIs, "" for a temp db).
bool IsPlainPath(const std::string& path) {
  return !path.empty() && path[0] != ':' && path.rfind("file:", 0) != 0;
}

// Creates the file 0600 when it does not exist yet: decisions and learned state are the
// operator's, not every local user's. SQLite gives its -wal and -shm files the database file's
// mode, so they follow. An existing file keeps its mode. When the file cannot be created
// (missing directory, ...) SQLite's own open fails next with the error the user sees. Special
// names (":memory:", "file:" URIs, "") are left to SQLite.
void CreatePrivate(const std::string& path) {
  if (!IsPlainPath(path)) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
}

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       StoreOptions options) {
  const std::string context = "unable to open sqlite db at " + path;
  RETURN_IF_ERROR(CheckStorePath(path).Wrap(context));
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
  if (options.page_size > 0) {  // before the file has pages; a no-op on an existing file
    auto size = QueryText(db, ("PRAGMA page_size=" + std::to_string(options.page_size)).c_str());
    if (!size.ok()) return size.status().Wrap(context);
  }
  // The first statement that reads the file: a corrupt file fails here, and another
  // program's database is refused before anything (its journal mode included) is changed.
  RETURN_IF_ERROR(CheckOwnDatabase(db).Wrap(context));
  auto mode = QueryText(db, "PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status().Wrap(context);
  if (*mode != "wal") {
    return Status::Error(context + ": cannot enable WAL mode (journal_mode is " + *mode + ")");
  }
  auto sync = QueryText(
      db, options.sync_every_commit ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  if (!sync.ok()) return sync.status().Wrap(context);
  if (options.cache_kib > 0) {  // otherwise SQLite's default
    auto cache = QueryText(db, ("PRAGMA cache_size=-" + std::to_string(options.cache_kib)).c_str());
    if (!cache.ok()) return cache.status().Wrap(context);
  }
  RETURN_IF_ERROR(ApplyMigrations(db).Wrap(context));
  RETURN_IF_ERROR(s->Prepare().Wrap(context));
  // Snapshots and log rows go on from the newest seq either holds.
  auto seq = QueryText(db,
                       "SELECT MAX(IFNULL((SELECT MAX(seq) FROM state), 0), "
                       "IFNULL((SELECT MAX(seq) FROM state_log), 0))");
  if (!seq.ok()) return seq.status().Wrap(context);
  s->seq_ = std::strtoll(seq->c_str(), nullptr, 10);
  auto logged = QueryText(db, "SELECT COUNT(*) FROM (SELECT 1 FROM state_log LIMIT 1)");
  if (!logged.ok()) return logged.status().Wrap(context);
  s->needs_compaction_ = *logged != "0";
  s->StartCheckpointer();
  return s;
}

void SqliteStore::StartCheckpointer() {
  if (!options_.checkpoint_in_background || !IsPlainPath(path_)) return;
  auto c = WalCheckpointer::Start(path_, options_.sync_every_commit,
                                  std::max(1, options_.checkpoint_pages));
  if (!c.ok()) {
    stats_.checkpoint_error = c.status().message();
    return;
  }
  checkpointer_ = std::move(c).value();
  // Replaces the hook behind SQLite's automatic checkpoint.
  sqlite3_wal_hook(db_, &SqliteStore::WalHook, this);
}

int SqliteStore::WalHook(void* self, sqlite3* db, const char* name, int pages) {
  if (static_cast<SqliteStore*>(self)->checkpointer_->Nudge(pages)) {
    sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  }
  return SQLITE_OK;
}

SqliteStore::WriteStats SqliteStore::Stats() {
  std::lock_guard<std::mutex> lock(mu_);
  WriteStats out = stats_;
  if (checkpointer_) {
    const WalCheckpointer::Stats c = checkpointer_->stats();
    out.checkpoints = c.checkpoints;
    out.checkpoint_failures = c.failures;
    if (!c.last_error.empty()) out.checkpoint_error = c.last_error;
  }
  return out;
}

SqliteStore::~SqliteStore() {
  // The checkpoint thread stops first, so closing the writer's connection checkpoints the rest
  // and removes the WAL as before.
  if (checkpointer_) sqlite3_wal_hook(db_, nullptr, nullptr);
  checkpointer_.reset();
  for (sqlite3_stmt* st :
       {insert_, head_, head_of_, row_, delete_row_, prune_, load_, save_, update_, log_insert_,
        log_prune_, log_scan_, log_clear_, begin_, commit_, rollback_}) {
    sqlite3_finalize(st);
  }
  sqlite3_close(db_);
}

Status SqliteStore::Prepare() {
  const std::pair<sqlite3_stmt**, const char*> stmts[] = {
      // A row links to its workload's row before it (schema 5), and the head moves to it.
      {&insert_,
       "INSERT INTO decisions (workload, t, json, fmt, prev) VALUES (?1, ?2, ?3, 1, "
       "(SELECT last FROM decision_heads WHERE workload = ?1))"},
      {&head_,
       "INSERT INTO decision_heads (workload, last) VALUES (?1, ?2) "
       "ON CONFLICT (workload) DO UPDATE SET last = excluded.last"},
      {&head_of_, "SELECT last FROM decision_heads WHERE workload = ?1"},
      {&row_, "SELECT workload, prev, t, json, fmt FROM decisions WHERE id = ?1"},
      {&delete_row_, "DELETE FROM decisions WHERE id = ?1"},
      // Oldest first through the time index, so a batch costs its own rows, not the table.
      {&prune_,
       "DELETE FROM decisions WHERE id IN (SELECT id FROM decisions WHERE t < ?1 ORDER BY t "
       "LIMIT ?2)"},
      {&load_, "SELECT json, fmt, body, seq FROM state WHERE key = ?1"},
      // The first save of a key in this process: an upsert that says which row it is.
      {&save_,
       "INSERT INTO state (key, json, fmt, body, seq) VALUES (?1, '', 1, ?2, ?3) "
       "ON CONFLICT (key) DO UPDATE SET json = '', fmt = 1, body = excluded.body, "
       "seq = excluded.seq RETURNING rowid"},
      // Every later one: straight to the row, in place (no key lookup, no delete and insert).
      {&update_, "UPDATE state SET body = ?2, seq = ?3 WHERE rowid = ?1"},
      {&log_insert_, "INSERT INTO state_log (seq, body) VALUES (?1, ?2)"},
      {&log_prune_, "DELETE FROM state_log WHERE seq <= ?1"},
      {&log_scan_, "SELECT seq, body FROM state_log ORDER BY seq"},
      {&log_clear_, "DELETE FROM state_log"},
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

Status SqliteStore::RecordLocked(const Decision& d, const ChangeFilter::Offer& o,
                                 size_t& inserted) {
  if (o.verdict == ChangeFilter::Verdict::kSkip) {
    ++stats_.decisions_skipped;
    return Status::Ok();
  }
  ++inserted;
  ++stats_.decisions_written;
  // A heartbeat is d with what it stands for (ChangeFilter::Stamp), encoded without the copy.
  const bool heartbeat = o.verdict == ChangeFilter::Verdict::kHeartbeat;
  DecisionToCompact(d, heartbeat ? o.ticks : d.unchanged_ticks,
                    heartbeat ? o.since : d.unchanged_for, decision_buf_);
  return InsertLocked(d, decision_buf_);
}

Status SqliteStore::InsertLocked(const Decision& d, const std::string& json) {
  {
    Reset r(insert_);
    BindText(insert_, 1, d.workload);
    sqlite3_bind_int64(insert_, 2, d.at.time_since_epoch().count());
    sqlite3_bind_text(insert_, 3, json.data(), static_cast<int>(json.size()), SQLITE_STATIC);
    if (sqlite3_step(insert_) != SQLITE_DONE) return Error("append decision for " + d.workload);
  }
  const int64_t id = sqlite3_last_insert_rowid(db_);
  {
    Reset r(head_);
    BindText(head_, 1, d.workload);
    sqlite3_bind_int64(head_, 2, id);
    if (sqlite3_step(head_) != SQLITE_DONE) return Error("append decision for " + d.workload);
  }
  return options_.keep_last > 0 ? TrimLocked(d.workload, id) : Status::Ok();
}

Result<bool> SqliteStore::ChainRowLocked(const std::string& workload, int64_t id) {
  sqlite3_bind_int64(row_, 1, id);
  const int rc = sqlite3_step(row_);
  if (rc == SQLITE_DONE) return false;
  if (rc != SQLITE_ROW) return Error("read decisions of " + workload);
  return ColumnText(row_, 0) == workload;
}

int64_t SqliteStore::ChainPrev(int64_t id) const {
  const int64_t prev = sqlite3_column_int64(row_, 1);  // NULL reads 0: the first row
  // Links point to older rows only: anything else ends the chain, so a damaged one cannot loop.
  return prev > 0 && prev < id ? prev : 0;
}

Result<std::optional<int64_t>> SqliteStore::PrevLocked(const std::string& workload, int64_t id) {
  Reset r(row_);
  ASSIGN_OR_RETURN(const bool mine, ChainRowLocked(workload, id));
  return mine ? std::optional<int64_t>(ChainPrev(id)) : std::nullopt;
}

// The newest keep_last rows stay: walk to the one after them, then delete it and the rest of
// the chain (one row per insert once the workload has keep_last).
Status SqliteStore::TrimLocked(const std::string& workload, int64_t newest) {
  int64_t id = newest;
  for (size_t k = 0; k < options_.keep_last && id > 0; ++k) {
    ASSIGN_OR_RETURN(const std::optional<int64_t> prev, PrevLocked(workload, id));
    id = prev.value_or(0);
  }
  while (id > 0) {
    ASSIGN_OR_RETURN(const std::optional<int64_t> prev, PrevLocked(workload, id));
    if (!prev) break;  // gone already
    Reset r(delete_row_);
    sqlite3_bind_int64(delete_row_, 1, id);
    if (sqlite3_step(delete_row_) != SQLITE_DONE) return Error("trim decisions of " + workload);
    id = *prev;
  }
  return Status::Ok();
}

// Delta bytes a state may log before it is written in full again, whatever its size: SQLite's
// default page size.
constexpr size_t kMinSnapshotInterval = 4096;

Result<int64_t> SqliteStore::UpsertStateLocked(const std::string& key, std::string_view body,
                                               int64_t seq) {
  Reset r(save_);
  BindText(save_, 1, key);
  sqlite3_bind_blob(save_, 2, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
  sqlite3_bind_int64(save_, 3, seq);
  if (sqlite3_step(save_) != SQLITE_ROW) return Error("save state " + key);
  const int64_t rowid = sqlite3_column_int64(save_, 0);
  if (sqlite3_step(save_) != SQLITE_DONE) return Error("save state " + key);
  return rowid;
}

Result<SqliteStore::Saved*> SqliteStore::SnapshotLocked(const std::string& key,
                                                        const PersistentState& state, int64_t seq,
                                                        Saved* saved) {
  StateToBytes(state, buf_);
  ++stats_.states_snapshotted;
  if (!saved) {
    ASSIGN_OR_RETURN(const int64_t rowid, UpsertStateLocked(key, buf_, seq));
    const int64_t period = std::max(1, options_.state_snapshot_ticks);
    const auto stagger = static_cast<int64_t>(std::hash<std::string>{}(key) % period);
    return &saved_.insert_or_assign(key, Saved{rowid, state, seq, buf_.size(), 0, stagger})
                .first->second;
  }
  Saved& s = *saved;
  Reset r(update_);
  sqlite3_bind_int64(update_, 1, s.rowid);
  sqlite3_bind_blob(update_, 2, buf_.data(), static_cast<int>(buf_.size()), SQLITE_STATIC);
  sqlite3_bind_int64(update_, 3, seq);
  if (sqlite3_step(update_) != SQLITE_DONE) return Error("save state " + key);
  s.snap_seq = seq;
  s.snap_bytes = buf_.size();
  s.logged_bytes = 0;
  return &s;
}

SqliteStore::StateHint SqliteStore::HintFor(const std::string& key) {
  StateHint h;
  if (auto it = saved_.find(key); it != saved_.end()) h.saved = &it->second;
  // The key's own hash spreads the keys over the ticks (the skipped states are the ones this
  // cadence exists to leave untouched).
  const int64_t every = std::max(1, options_.state_every_ticks);
  h.due_offset = static_cast<int64_t>(std::hash<std::string>{}(key) % every);
  return h;
}

bool SqliteStore::StateDue(const StateHint& h, int64_t batch) const {
  const int64_t every = options_.state_every_ticks;
  return every <= 1 || (batch + h.due_offset) % every == 0;
}

// Most states change every tick, by a little: the delta is logged, and the state written in
// full only when the deltas since its snapshot would outgrow it or the snapshot is old.
Status SqliteStore::StageStateLocked(const std::string& key, const PersistentState& state,
                                     int64_t seq, Saved*& saved) {
  if (!saved) {
    ++stats_.states_written;
    ASSIGN_OR_RETURN(saved, SnapshotLocked(key, state, seq, nullptr));
    return Status::Ok();
  }
  Saved& s = *saved;
  delta_buf_.clear();
  if (!TakeStateDelta(s.state, state, delta_buf_)) {
    ++stats_.states_skipped;
    return Status::Ok();
  }
  ++stats_.states_written;
  // A snapshot at this seq already: a delta in this row would be skipped on replay. Otherwise
  // the deltas may grow to the snapshot's size, and to at least a page: rewriting a row dirties
  // a whole page however small the row, so a 100-byte state that changes every tick would cost
  // a page a tick.
  if (s.snap_seq == seq ||
      s.logged_bytes + delta_buf_.size() > std::max(s.snap_bytes, kMinSnapshotInterval) ||
      seq - s.snap_seq >= std::max(1, options_.state_snapshot_ticks) + s.stagger) {
    return SnapshotLocked(key, s.state, seq, &s).status();
  }
  PutVarint(log_buf_, key.size());
  log_buf_ += key;
  PutVarint(log_buf_, delta_buf_.size());
  log_buf_ += delta_buf_;
  s.logged_bytes += delta_buf_.size();
  stats_.state_log_bytes += static_cast<int64_t>(delta_buf_.size());
  return Status::Ok();
}

Status SqliteStore::WriteLogLocked(int64_t seq) {
  if (!log_buf_.empty()) {
    Reset r(log_insert_);
    sqlite3_bind_int64(log_insert_, 1, seq);
    sqlite3_bind_blob(log_insert_, 2, log_buf_.data(), static_cast<int>(log_buf_.size()),
                      SQLITE_STATIC);
    if (sqlite3_step(log_insert_) != SQLITE_DONE) return Error("log state deltas");
  }
  // Pruning walks every key this store wrote: every 16th row is often enough (the log holds
  // up to 2 x state_snapshot_ticks rows anyway).
  if (needs_compaction_ || seq % 16 != 0) return Status::Ok();
  // A row is needed while some key has deltas after a snapshot older than it.
  int64_t needed_after = seq;
  for (const auto& [key, s] : saved_) {
    if (s.logged_bytes > 0) needed_after = std::min(needed_after, s.snap_seq);
  }
  Reset r(log_prune_);
  sqlite3_bind_int64(log_prune_, 1, needed_after);
  if (sqlite3_step(log_prune_) != SQLITE_DONE) return Error("prune the state log");
  return Status::Ok();
}

Status SqliteStore::PruneLocked(TimePoint newest, size_t inserted) {
  if (options_.retention.count() <= 0) return Status::Ok();
  Reset r(prune_);
  sqlite3_bind_int64(prune_, 1, (newest - options_.retention).time_since_epoch().count());
  sqlite3_bind_int64(prune_, 2, static_cast<int64_t>(options_.prune_batch + 2 * inserted));
  if (sqlite3_step(prune_) != SQLITE_DONE) return Error("prune old decisions");
  stats_.decisions_pruned += sqlite3_changes(db_);
  return Status::Ok();
}

void SqliteStore::ForgetLocked() {
  filter_.Clear();
  state_hints_.Clear();  // before the entries it points at go
  saved_.clear();
  needs_compaction_ = true;  // committed deltas of the forgotten keys stay in the log
  write_all_states_ = true;  // whatever their turn (state_every_ticks)
}

Status SqliteStore::Append(const Decision& d) {
  std::lock_guard<std::mutex> lock(mu_);
  const Status st = TransactionLocked("append of " + d.workload, [&] {
    size_t inserted = 0;
    RETURN_IF_ERROR(RecordLocked(d, filter_.Consider(d), inserted));
    return PruneLocked(d.at, inserted);
  });
  if (!st.ok()) ForgetLocked();
  return st;
}

Status SqliteStore::WriteBatch(const std::vector<StoreWrite>& writes) {
  std::lock_guard<std::mutex> lock(mu_);
  const Status st =
      TransactionLocked("a batch of " + std::to_string(writes.size()) + " writes", [&] {
        size_t inserted = 0;
        TimePoint newest{};
        const int64_t seq = seq_ + 1;
        bool states = false;
        log_buf_.clear();
        const int64_t batch = batches_++;
        const bool all = std::exchange(write_all_states_, false);
        size_t k = 0;  // the state's position in the batch
        for (size_t i = 0; i < writes.size(); ++i) {
          const StoreWrite& w = writes[i];
          if (w.decision) {
            RETURN_IF_ERROR(RecordLocked(*w.decision, filter_.Consider(*w.decision, i), inserted));
            newest = std::max(newest, w.decision->at);
          }
          const bool now = all || w.flush || (w.decision && w.decision->action == Action::kScaled);
          for (const auto& [key, state] : w.states) {
            StateHint* h = state_hints_.Find(k, key);
            if (!h) h = &state_hints_.Remember(k, key, HintFor(key));
            ++k;
            if (!now && !StateDue(*h, batch)) {
              ++stats_.states_deferred;
              continue;
            }
            states = true;
            RETURN_IF_ERROR(StageStateLocked(key, *state, seq, h->saved));
          }
        }
        if (states) {
          seq_ = seq;
          RETURN_IF_ERROR(WriteLogLocked(seq));
        }
        return PruneLocked(newest, inserted);
      });
  if (!st.ok()) ForgetLocked();
  return st;
}

Result<std::vector<Decision>> SqliteStore::Recent(const std::string& workload, size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t id = 0;
  {
    Reset r(head_of_);
    BindText(head_of_, 1, workload);
    const int rc = sqlite3_step(head_of_);
    if (rc == SQLITE_ROW) id = sqlite3_column_int64(head_of_, 0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error("read decisions of " + workload);
  }
  // Newest first along the chain; it ends at the first row, or where retention or a trim
  // deleted the rows before.
  std::vector<Decision> out;
  while (id > 0 && out.size() < n) {
    Reset r(row_);
    ASSIGN_OR_RETURN(const bool mine, ChainRowLocked(workload, id));
    if (!mine) break;
    const TimePoint t{Duration(sqlite3_column_int64(row_, 2))};
    auto d = DecodeDecision(ColumnText(row_, 3), sqlite3_column_int(row_, 4), workload, t);
    if (d.ok()) {
      out.push_back(std::move(d).value());
    } else {
      ++stats_.decisions_unreadable;  // skipped: the rows around it still read
    }
    id = ChainPrev(id);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

Result<SqliteStore::Snapshot> SqliteStore::ReadSnapshotLocked(const std::string& key) {
  Reset r(load_);
  BindText(load_, 1, key);
  const int rc = sqlite3_step(load_);
  if (rc == SQLITE_DONE) return Snapshot{};
  if (rc != SQLITE_ROW) return Error("load state " + key);
  Result<PersistentState> s = PersistentState{};
  if (sqlite3_column_int(load_, 1) == 1) {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(load_, 2));
    s = StateFromBytes(
        std::string_view(p ? p : "", static_cast<size_t>(sqlite3_column_bytes(load_, 2))));
  } else {
    auto j = nlohmann::json::parse(ColumnText(load_, 0), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      return Status::Error("unable to load state " + key + " in sqlite db at " + path_ +
                           ": not valid JSON");
    }
    s = StateFromJson(j);
  }
  if (!s.ok()) return s.status().Wrap("unable to load state " + key + " in sqlite db at " + path_);
  return Snapshot{std::move(s).value(), sqlite3_column_int64(load_, 3)};
}

// Every key the log names gets its snapshot plus the deltas logged after it, written back as
// a snapshot at the newest seq; then the log is emptied. One transaction: a failure leaves
// the log as it was.
Status SqliteStore::CompactLocked() {
  std::unordered_map<std::string, Snapshot> touched;
  const Status st = TransactionLocked("fold the state log", [&]() -> Status {
    int64_t last = 0;
    Reset r(log_scan_);
    int rc;
    while ((rc = sqlite3_step(log_scan_)) == SQLITE_ROW) {
      last = sqlite3_column_int64(log_scan_, 0);
      const auto* p = static_cast<const char*>(sqlite3_column_blob(log_scan_, 1));
      std::string_view in(p ? p : "", static_cast<size_t>(sqlite3_column_bytes(log_scan_, 1)));
      while (!in.empty()) {
        uint64_t key_len = 0, delta_len = 0;
        const auto truncated = [&] {
          return Status::Error("unable to read the state log in sqlite db at " + path_ + ": row " +
                               std::to_string(last) + " is truncated");
        };
        if (!GetVarint(in, key_len) || key_len > in.size()) return truncated();
        const std::string key(in.substr(0, static_cast<size_t>(key_len)));
        in.remove_prefix(static_cast<size_t>(key_len));
        if (!GetVarint(in, delta_len) || delta_len > in.size()) return truncated();
        auto it = touched.find(key);
        if (it == touched.end()) {
          ASSIGN_OR_RETURN(Snapshot snap, ReadSnapshotLocked(key));
          it = touched.emplace(key, std::move(snap)).first;
        }
        if (last > it->second.seq) {
          RETURN_IF_ERROR(
              ApplyStateDelta(in.substr(0, static_cast<size_t>(delta_len)), it->second.state)
                  .Wrap("unable to replay state " + key + " in sqlite db at " + path_));
        }
        in.remove_prefix(static_cast<size_t>(delta_len));
      }
    }
    if (rc != SQLITE_DONE) return Error("read the state log");
    for (const auto& [key, snap] : touched) {
      StateToBytes(snap.state, buf_);
      RETURN_IF_ERROR(UpsertStateLocked(key, buf_, std::max(last, seq_)).status());
    }
    Reset c(log_clear_);
    if (sqlite3_step(log_clear_) != SQLITE_DONE) return Error("empty the state log");
    return Status::Ok();
  });
  if (!st.ok()) return st;
  needs_compaction_ = false;
  return Status::Ok();
}

Result<PersistentState> SqliteStore::LoadState(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  // What this store wrote last is what the file holds (snapshot and log together).
  if (auto it = saved_.find(key); it != saved_.end()) return it->second.state;
  if (needs_compaction_) RETURN_IF_ERROR(CompactLocked());
  ASSIGN_OR_RETURN(Snapshot snap, ReadSnapshotLocked(key));
  return std::move(snap.state);
}

Status SqliteStore::SaveState(const std::string& key, const PersistentState& state) {
  std::lock_guard<std::mutex> lock(mu_);
  // Outside a batch there is no log row to carry a delta: a full snapshot, at a seq of its own.
  auto it = saved_.find(key);
  delta_buf_.clear();
  if (it != saved_.end() && !TakeStateDelta(it->second.state, state, delta_buf_)) {
    ++stats_.states_skipped;
    return Status::Ok();
  }
  ++stats_.states_written;
  const Status st =
      SnapshotLocked(key, state, ++seq_, it == saved_.end() ? nullptr : &it->second).status();
  if (!st.ok()) ForgetLocked();
  return st;
}

Result<int64_t> SqliteStore::SizeBytes() {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(std::string pages, QueryText(db_, "PRAGMA page_count"));
  ASSIGN_OR_RETURN(std::string size, QueryText(db_, "PRAGMA page_size"));
  return static_cast<int64_t>(std::strtoll(pages.c_str(), nullptr, 10)) *
         static_cast<int64_t>(std::strtoll(size.c_str(), nullptr, 10));
}

Result<std::string> SqliteStore::JournalModeForTest() {
  std::lock_guard<std::mutex> lock(mu_);
  return QueryText(db_, "PRAGMA journal_mode");
}

}  // namespace aiscale::store
