#include "monitor/source_registry.h"

#include "monitor/prometheus_source.h"

namespace aiscale::monitor {
namespace {

// Each parser validates its fields once and captures the typed config in the factory.
Result<SourceSpec> ParsePrometheus(const config::ConfigNode& node) {
  const size_t before = node.errors()->size();
  PrometheusSourceConfig cfg = PrometheusSourceConfig::Parse(node);
  if (node.errors()->size() > before) return Status::Invalid("see config errors");
  SourceSpec s{cfg.name, "prometheus", nullptr};
  s.make = [cfg](const BuildEnv& env) -> Result<std::unique_ptr<MetricSource>> {
    if (!env.http)
      return Status::Internal("prometheus source " + cfg.name + " needs an HTTP client");
    return std::unique_ptr<MetricSource>(std::make_unique<PrometheusSource>(cfg, *env.http));
  };
  return s;
}

}  // namespace

Result<SourceRegistry> DefaultSourceRegistry() {
  // One line per source type. Keep alphabetical.
  return SourceRegistry::FromEntries("type", {
                                                 {"prometheus", &ParsePrometheus},
                                             });
}

}  // namespace aiscale::monitor
