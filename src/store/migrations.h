// The SQLite schema as a numbered list of migrations, the only place the schema is written.
//
// Why: a store file outlives the binary that made it. On open, every migration whose number
// is above the file's schema_version runs, all in one transaction, so a file is either at the
// old version or the new one, never between. A file newer than this binary is refused rather
// than misread. Add a migration by appending to the list in migrations.cc; never edit one
// that has shipped.
#pragma once

#include <sqlite3.h>

#include <vector>

#include "core/result.h"

namespace aiscale::store {

struct Migration {
  int version;      // 1, 2, 3, ... in order
  const char* sql;  // one or more statements
};

const std::vector<Migration>& Migrations();
// The version a fully migrated file has.
int LatestSchemaVersion();
// Brings `db` to LatestSchemaVersion(). Errors say which version failed and why.
Status ApplyMigrations(sqlite3* db);
// The file's version (0 for a new file).
Result<int> SchemaVersion(sqlite3* db);
// Ok for an empty database or one whose tables are all aiscale's (with its schema_version);
// kInvalid naming the foreign tables otherwise. Reads only: run it before anything writes, so
// another program's database pointed at by mistake is left exactly as it was.
Status CheckOwnDatabase(sqlite3* db);

}  // namespace aiscale::store
