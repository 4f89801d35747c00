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

// Inverses of SignalStatusName and ActionName; an unknown name is an error.
Result<SignalStatus> SignalStatusFromName(std::string_view name);
Result<Action> ActionFromName(std::string_view name);

}  // namespace aiscale
