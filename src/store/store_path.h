// CheckStorePath: why a store file cannot be opened, in words, before SQLite tries.
//
// Why: SQLite says "unable to open database file" for a directory, a read-only filesystem, a
// missing directory, a FIFO (which it may also block on) and a too-long name alike. This names
// the path and the reason. Special names (":memory:", "file:" URIs, "") are left to SQLite.
#pragma once

#include <string>

#include "core/result.h"

namespace aiscale::store {

// Ok when `path` is (or can be created as) a regular, readable and writable file in a
// writable directory (WAL mode writes PATH-wal and PATH-shm beside it); else kInvalid or
// kPermissionDenied naming the path and the reason. Creates nothing.
Status CheckStorePath(const std::string& path);

}  // namespace aiscale::store
