// StoreOptions: what both Store implementations let a deployment tune.
#pragma once

#include <cstddef>

namespace aiscale::store {

struct StoreOptions {
  // Decisions kept per workload (the newest); 0 keeps all. Bounds the file of a controller
  // that runs for months.
  size_t keep_last = 0;
  // SqliteStore only: fsync every commit (synchronous=FULL). With false (NORMAL), WAL mode
  // keeps the file consistent but a power cut may lose the last commits.
  bool sync_every_commit = true;
};

}  // namespace aiscale::store
