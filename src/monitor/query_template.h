// Query templates: a signal's PromQL expression with {workload} and {namespace} placeholders,
// expanded safely for one workload, or rewritten to select many workloads at once.
//
// Expansion is context-aware: inside a quoted string literal a value is escaped for that
// literal (backslashes, quotes); inside the literal of a regex matcher (=~, !~) it is first
// regex-escaped, so "llm.v2" matches only itself. Outside any literal a value is substituted
// as is (place placeholders inside quotes). Pure functions, no state; safe from any thread.
//
//   auto plan = PlanBatch(R"(sum by (pod, deployment) (rate(x{deployment="{workload}"}[1m])))",
//                         ref);
//   plan->Query({"a", "b"})  // ... x{deployment=~"a|b"} ...; route series by `deployment`
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/scale.h"

namespace aiscale::monitor {

// Escapes `s` for a PromQL string literal quoted with `quote` (" or ').
std::string EscapePromString(std::string_view s, char quote = '"');
// Escapes RE2 metacharacters (\.+*?()|[]{}^$), like Go's regexp.QuoteMeta.
std::string EscapeRegex(std::string_view s);

// True when `tmpl` mentions {workload} or {namespace}.
bool HasPlaceholders(std::string_view tmpl);
// Substitutes {workload} (w.name) and {namespace} (w.namespace_) in `tmpl`. kInvalid when a
// value cannot be written into its literal (a backtick inside a `raw` string).
Result<std::string> ExpandTemplate(std::string_view tmpl, const WorkloadRef& w);

// How one template serves many workloads with one query: the template with its only
// {workload} placeholder, the whole value of an equality matcher LABEL="{workload}", turned
// into LABEL=~"name1|name2|...". Prometheus anchors matcher regexes itself
// ("^(?:" + v + ")$" in model/labels/regexp.go), so each alternative matches a whole name.
struct BatchPlan {
  std::string label;   // LABEL: every returned series must carry it to be routed
  std::string prefix;  // expanded text before `LABEL="{workload}"`
  std::string suffix;  // expanded text after it
  // The query selecting exactly `names` (each regex-escaped).
  std::string Query(const std::vector<std::string>& names) const;
  // Equal keys mean one request can answer both queries.
  std::string Key() const;
};

// A plan when `tmpl` is batchable (see BatchPlan) and its other placeholders expand for `w`;
// nullopt otherwise (the caller then sends one query per workload).
std::optional<BatchPlan> PlanBatch(std::string_view tmpl, const WorkloadRef& w);

// Splits `names` into runs whose regex alternation (escaped, '|'-joined) stays within
// `max_regex_bytes`; a single longer name gets a run of its own.
std::vector<std::vector<std::string>> ChunkNames(const std::vector<std::string>& names,
                                                 size_t max_regex_bytes);

}  // namespace aiscale::monitor
