#include "server/api_handlers.h"

#include <algorithm>

#include "server/json_views.h"

namespace aiscale::server {
namespace {

Reply JsonReply(const nlohmann::json& j) { return Reply{200, Dump(j), kJsonType}; }

// The HTTP status that reports a failed lookup or parse.
int HttpStatusOf(const Status& s) {
  if (s.IsNotFound()) return 404;
  if (s.IsInvalid()) return 400;
  if (s.IsUnavailable()) return 503;
  return 500;
}

}  // namespace

Reply ErrorReply(int http_status, std::string_view message) {
  return Reply{http_status, Dump(ErrorJson(http_status, message)), kJsonType};
}

Reply Healthz() { return Reply{200, "ok", kTextType}; }

Reply Readyz(const LiveView& view) {
  if (!view.Ready()) return ErrorReply(503, "not ready: no controller tick has completed yet");
  return Reply{200, "ok", kTextType};
}

Reply Metrics(const Telemetry& telemetry) {
  return Reply{200, telemetry.RenderText(), kMetricsType};
}

Reply ListWorkloads(const LiveView& view) {
  std::vector<WorkloadView> all = view.Workloads();
  // Stable output whatever order the view keeps.
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.ref.Key() < b.ref.Key(); });
  nlohmann::json items = nlohmann::json::array();
  for (const WorkloadView& w : all) items.push_back(WorkloadSummaryJson(w));
  return JsonReply({{"count", all.size()}, {"workloads", std::move(items)}});
}

Reply GetPool(const LiveView& view) {
  std::optional<PoolView> pool = view.Pool();
  if (pool) return JsonReply(PoolJson(*pool));
  if (!view.Ready()) return ErrorReply(503, "no tick has completed yet");
  return ErrorReply(404, "this daemon runs no shared pool (no spec.pool in its config)");
}

Result<WorkloadView> ResolveWorkload(const LiveView& view, const std::string& name) {
  if (auto w = view.Workload(name)) return std::move(*w);
  if (name.find('/') == std::string::npos) {
    std::vector<WorkloadView> matches;
    for (WorkloadView& w : view.Workloads()) {
      if (w.ref.name == name) matches.push_back(std::move(w));
    }
    if (matches.size() == 1) return std::move(matches[0]);
    if (matches.size() > 1) {
      std::string keys;
      for (const auto& w : matches) keys += (keys.empty() ? "" : ", ") + w.ref.Key();
      return Status::Invalid("workload name '" + name +
                             "' is ambiguous; use namespace/name, one of: " + keys);
    }
  }
  return Status::NotFound("unknown workload '" + name + "'");
}

Result<size_t> ParseLimit(const std::optional<std::string>& limit) {
  if (!limit) return kDefaultDecisionLimit;
  const std::string& s = *limit;
  const bool digits = !s.empty() && s.size() <= 4 &&
                      std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  const size_t n = digits ? std::stoul(s) : 0;
  if (n < 1 || n > kMaxDecisionLimit) {
    return Status::Invalid("invalid limit '" + s + "': must be an integer in 1.." +
                           std::to_string(kMaxDecisionLimit));
  }
  return n;
}

Reply GetWorkload(const LiveView& view, const std::string& name) {
  auto w = ResolveWorkload(view, name);
  if (!w.ok()) return ErrorReply(HttpStatusOf(w.status()), w.status().message());
  return JsonReply(WorkloadDetailJson(*w));
}

Reply ListDecisions(const LiveView& view, Store* store, const std::string& name,
                    const std::optional<std::string>& limit) {
  auto n = ParseLimit(limit);
  if (!n.ok()) return ErrorReply(400, n.status().message());
  if (!store) {
    return ErrorReply(503, "no store configured: decisions are not recorded (set spec.store)");
  }
  auto w = ResolveWorkload(view, name);
  if (!w.ok() && !w.status().IsNotFound()) {
    return ErrorReply(HttpStatusOf(w.status()), w.status().message());
  }
  const std::string key = w.ok() ? w->ref.Key() : name;
  auto recent = store->Recent(key, *n);
  if (!recent.ok()) {
    return ErrorReply(500, "unable to read decisions of '" + key +
                               "' from the store: " + recent.status().message());
  }
  if (recent->empty() && !w.ok()) return ErrorReply(404, w.status().message());
  std::vector<Decision> newest_first = std::move(*recent);
  std::reverse(newest_first.begin(), newest_first.end());  // the Store gives newest last
  return JsonReply(DecisionListJson(key, newest_first));
}

}  // namespace aiscale::server
