#include "monitor/source_registry.h"

#include "monitor/prometheus_source.h"
#include "monitor/scrape_source.h"

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

Result<SourceSpec> ParseScrape(const config::ConfigNode& node) {
  const size_t before = node.errors()->size();
  ScrapeSourceConfig cfg = ScrapeSourceConfig::Parse(node);
  if (node.errors()->size() > before) return Status::Invalid("see config errors");
  SourceSpec s{cfg.name, "scrape", nullptr};
  s.make = [cfg](const BuildEnv& env) -> Result<std::unique_ptr<MetricSource>> {
    if (!env.http) return Status::Internal("scrape source " + cfg.name + " needs an HTTP client");
    return std::unique_ptr<MetricSource>(
        std::make_unique<ScrapeSource>(cfg, *env.http, env.endpoints));
  };
  return s;
}

}  // namespace

Result<SourceRegistry> DefaultSourceRegistry() {
  // One line per source type. Keep alphabetical.
  return SourceRegistry::FromEntries("type", {
                                                 {"prometheus", &ParsePrometheus},
                                                 {"scrape", &ParseScrape},
                                             });
}

}  // namespace aiscale::monitor
