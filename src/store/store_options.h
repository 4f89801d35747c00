// StoreOptions: what both Store implementations let a deployment tune.
#pragma once

#include <cstddef>

#include "core/time.h"

namespace aiscale::store {

struct StoreOptions {
  // Decisions kept per workload (the newest); 0 keeps all. Bounds the file of a controller
  // that runs for months.
  size_t keep_last = 0;
  // SqliteStore only: fsync every commit (synchronous=FULL). With false (NORMAL), WAL mode
  // keeps the file consistent but a power cut may lose the last commits.
  bool sync_every_commit = true;
  // Keep a decision only when it changed, plus one heartbeat per this period that says how many
  // unchanged ticks it stands for (see change_filter.h). Zero keeps every decision. The
  // controller's config sets 5 minutes (`store.heartbeat`).
  Duration heartbeat{};
  // Decisions older than this (by their time) are deleted, a bounded batch per write
  // (prune_batch plus twice the rows that write added, so pruning outpaces growth) inside the
  // write's own transaction: no tick waits on a large delete. Zero keeps them. State is never
  // pruned.
  Duration retention{};
  size_t prune_batch = 1000;
  // SqliteStore only: a state that changes is logged as deltas and written in full again at
  // least once per this many batches (ticks), at a per-key offset of up to as many again, so
  // the state log holds at most twice this many ticks plus 16 (it is pruned every 16th); a
  // restart replays at most that (see sqlite_store.h).
  int state_snapshot_ticks = 40;
  // SqliteStore only: a key's state is written (as a delta or a snapshot) in one batch out of
  // this many, at a per-key offset, so each tick writes about 1/N of the states; and at once
  // in a batch whose decision scaled its workload (the stabilizer's record of that scale must
  // not be lost) or that asks for it (StoreWrite::flush: `aiscale run` flushes on a clean
  // stop). The price: a crash loses up to N-1 ticks of what the policies learned (their
  // windows and fits restart that much older; HPA, which keeps none, loses all of it). 1
  // writes every state every tick. The controller's config: `store.state_every_ticks`.
  int state_every_ticks = 1;
  // SqliteStore only: SQLite's page cache, in KiB. The state snapshots and the tail of the
  // decisions table are rewritten every few ticks; a cache that holds them saves rereading
  // them from the WAL (at 10,000 policy-mix workloads, 64 MiB against SQLite's default 2 MB:
  // WriteBatch 185 vs 347 ms wall, bench/controller_bench.cc). 0 keeps SQLite's default.
  int cache_kib = 65536;
  // SqliteStore only: the page size of a new file (a power of two, 512 to 65536; an existing
  // file keeps its own, SQLite changes it only by a VACUUM outside WAL mode). A tick at
  // 10,000 policy-mix workloads dirties over 1,000 pages of SQLite's default 4 KiB, each a WAL
  // frame and a write call; in 16 KiB pages about half as many checkpoints run and the tick
  // took 141 vs 168 ms median (WriteBatch 46 vs 60 ms; bench/controller_bench.cc, one core,
  // 3 rounds side by side). 0 keeps SQLite's default.
  int page_size = 16384;
  // SqliteStore only, on a file: WAL checkpoints run on a thread of their own
  // (wal_checkpointer.h) rather than inside the commit that crosses checkpoint_pages WAL pages
  // (SQLite's default threshold). false keeps SQLite's automatic checkpoint.
  bool checkpoint_in_background = true;
  int checkpoint_pages = 1000;
};

}  // namespace aiscale::store
