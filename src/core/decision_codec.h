// JSON decoding of a Decision and a JSON codec for PersistentState, the inverse of ToJson.
//
// Why: the Store keeps decisions and learned state as JSON text, so a restarted controller
// (and the API) can read back what an earlier one wrote. FromJson(ToJson(d)) gives back every
// field of d, except that facts come back ordered by name (a JSON object), non-finite facts
// and input values come back as NaN, and `at` is rounded to the nearest nanosecond of its
// seconds value. Decoding never throws: bad input is an error Status.
#pragma once

#include <nlohmann/json.hpp>

#include "core/decision.h"
#include "core/result.h"
#include "core/state.h"

namespace aiscale {

Result<StatusCode> StatusCodeFromName(std::string_view name);
Result<Decision> DecisionFromJson(const nlohmann::json& j);

// {"key": [1.0, "NaN", "Infinity"], ...}: lossless, non-finite values as strings (a learned
// state may hold them, and JSON numbers cannot). null also reads as NaN.
nlohmann::json StateToJson(const PersistentState& s);
Result<PersistentState> StateFromJson(const nlohmann::json& j);

// The compact form the Store keeps (store format 1): JSON text with short keys, default and
// empty fields left out, inputs as arrays, facts in their order, wall time in integer ns.
// workload and `at` are stored in their own columns and not repeated; the decoder takes them.
// Roughly a third the size of ToJson's. Decoding never throws.
//   {"p":policy,"ws":wall_ns,"c":current,"r":ready,"e":engine_detail,
//    "i":[[name,"ok",value,sum,instances(,detail)] | [name,status(,detail)]],
//    "d":desired,"v":0 (only when invalid),"ru":rule,"re":reason,"f":[[name,value],...],
//    "s":stabilized,"sr":..,"k":constrained,"kr":..,"vt":1,
//    "pt":pool tenant,"pw":wanted,"pg":granted,"pr":pool reason,"pd":pool detail (in a pool),
//    "a":action,"ac":code,"ad":..,
//    "u":unchanged_ticks,"uf":unchanged_for_ns}
std::string DecisionToCompact(const Decision& d);
// The same into `out` (its contents replaced, its buffer reused), with `unchanged_ticks` and
// `unchanged_for` in place of d's own: a Store writes a heartbeat record of d without a copy.
void DecisionToCompact(const Decision& d, int unchanged_ticks, Duration unchanged_for,
                       std::string& out);
Result<Decision> DecisionFromCompact(std::string_view text, const std::string& workload,
                                     TimePoint at);
// The same through a full JSON document (nlohmann), which DecisionFromCompact uses only for text
// its own reader does not take (a field repeated or of an unexpected type, corrupt bytes): the
// two must agree wherever the fast one answers, and tests check that they do.
Result<Decision> DecisionFromCompactDocument(std::string_view text, const std::string& workload,
                                             TimePoint at);

// A binary PersistentState (store format 1), lossless for every double (NaN and infinities
// included), and far cheaper to write than the JSON codec. Per key, in key order: varint bytes
// shared with the previous key, varint length and bytes of the rest, varint count, count
// doubles in this machine's byte order (a store file is read back by the machine that wrote
// it; SQLite's own format is portable, this payload is not). Writes into `out` (cleared
// first), so a caller can reuse one buffer.
void StateToBytes(const PersistentState& s, std::string& out);
Result<PersistentState> StateFromBytes(std::string_view bytes);

// Inverses of SignalStatusName and ActionName; an unknown name is an error.
Result<SignalStatus> SignalStatusFromName(std::string_view name);
Result<Action> ActionFromName(std::string_view name);

}  // namespace aiscale
