#include "cli/aiscaler_config.h"

#include <set>

namespace aiscale::cli {
namespace {

bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

}  // namespace

AiScalerWatchConfig AiScalerWatchConfig::Parse(const config::ConfigNode& node) {
  AiScalerWatchConfig c;
  if (!node.IsMap()) {
    node.Error("must be a map: {namespaces: [...], auth: {...}, timeout: 10s, status: {...}}");
    return c;
  }
  node.CheckKnown({"enabled", "namespaces", "auth", "timeout", "status"});
  c.enabled = node.Bool("enabled", true);
  std::set<std::string> seen;
  for (const config::ConfigNode& n : node.Child("namespaces").Items()) {
    const std::string ns = n.IsDefined() && n.raw().IsScalar() ? n.raw().Scalar() : "";
    if (!IsDnsLabel(ns)) {
      n.Error("must be a namespace name (a DNS label: lower case letters, digits, '-')");
    } else if (!seen.insert(ns).second) {
      n.Error("namespace '" + ns + "' is listed twice");
    } else {
      c.namespaces.push_back(ns);
    }
  }
  c.auth = act::ParseKubeAuth(node);
  c.call_timeout = Seconds(node.DurationSeconds("timeout", 10, config::Above(0)));
  const config::ConfigNode status = node.Child("status");
  if (status.IsDefined()) {
    status.CheckKnown({"metrics_interval", "qps"});
    c.metrics_interval =
        Seconds(status.DurationSeconds("metrics_interval", 60, config::AtLeast(0)));
    c.status_qps = status.Number("qps", c.status_qps, config::Between(0.1, 10000));
  }
  return c;
}

}  // namespace aiscale::cli
