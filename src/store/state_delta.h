// State deltas: what turns one PersistentState into the next, so that SqliteStore can log the
// few numbers a tick changed instead of rewriting every learned state in full (store format 2,
// schema version 3).
//
// Why: most policies' states change every tick, but by a little (a window gains an entry and
// loses its oldest, a Holt-Winters season moves one slot, a few training scalars advance). A
// delta per changed vector is a small fraction of the state, and replaying deltas on the last
// full snapshot gives back the state bit for bit (doubles are compared and copied as bytes:
// NaN payloads, infinities and -0.0 survive).
//
// Format of a delta: ops until its end, each
//   varint name length, name, varint tag;
//   tag 0: erase the vector;
//   tag 1: varint drop (leading values removed), varint size (the new size), varint offset,
//          varint count, count doubles (this machine's byte order) written at offset.
// Applying never throws and never reads or allocates past its input: a corrupt delta is an
// error Status and leaves the state partly updated (the caller discards it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/state.h"
#include "core/varint.h"

namespace aiscale::store {

// Appends to `out` the delta from `last` to `next` and makes `last` equal to `next` (vectors
// that differ are assigned in place, reusing their memory); returns false, appending nothing,
// when they were already equal bit for bit.
bool TakeStateDelta(PersistentState& last, const PersistentState& next, std::string& out);
Status ApplyStateDelta(std::string_view delta, PersistentState& state);

// About what StateToBytes writes for `s`, to choose a delta or a full snapshot.
size_t SnapshotBytes(const PersistentState& s);

}  // namespace aiscale::store
