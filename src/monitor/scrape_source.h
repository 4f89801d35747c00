// ScrapeSource: a MetricSource that reads exposition endpoints directly (dcgm-exporter, vLLM,
// a training job's /metrics) with no Prometheus in between.
//
// Why: an autoscaler next to its workloads should not need a Prometheus to see them; AIBrix and
// KServe read vLLM pods the same way. One entry of the controller config's `sources:` list:
//
//   - name: direct          # signals refer to it (source: direct)
//     type: scrape
//     preset: vllm          # "", dcgm, vllm, training (presets.h)
//     targets: replicas     # or a list of URLs: [http://127.0.0.1:9400/metrics, ...]
//     path: /metrics        # for targets: replicas
//     timeout: 2s
//     max_body_bytes: 16Mi  # or a number; Ki/Mi/Gi binary, K/M/G decimal
//     max_series: 1000000   # samples per scrape (each histogram bucket is one); more is kInvalid
//     window: 30s           # rate / quantile window
//
// What a query means: MetricQuery::expression empty -> the preset's mapping for q.signal
// (kInvalid if it has none); otherwise a selector (selector.h): gauges as read, counters as a
// per-second rate over `window`, histograms as the p99 of the window's observations. Rates and
// quantiles need two scrapes of a target: until then the target contributes nothing (missing,
// never 0). The window's baseline is the newest kept scrape at least `window` older than the
// current one (or the oldest kept, while the history is younger than the window), never one
// older than two windows; the source keeps only the scrapes it needs, at most kMaxHistory per
// target.
//
// One HTTP request per target per round: a target scraped at `now` is reused by every query at
// a `now` within kReuseWithin of it (signals of one workload fetched at one tick), its error
// included; concurrent queries for one target wait for the one request in flight.
//
// Naming a target's series is linear in their number (a hash of label values, never each
// series against every other).
// Observations: one per series, or one per target when the preset (or agg(...)) reduces; the
// instance is the replica's name (targets: replicas) or host:port of the URL (a dcgm Hostname
// label replaces it), plus "/<label value>" naming the series (gpu, engine...) when a target
// has several, or always for per-GPU presets; `ready` from ReplicaEndpoint.ready (fixed URLs:
// true); `at` is the sample's timestamp if it has one, else `now`. NaN values pass through
// (core filters them).
//
// Errors: if every target fails, the first target's error is returned with its code
// (kUnavailable: refused or 5xx; kDeadlineExceeded: timeout; kInvalid: malformed payload, with
// the parser's line, or body over max_body_bytes; kNotFound: metric absent or no endpoints) and
// the message names every failed URL. If some targets answer, their observations are returned
// and the failures are dropped: an Observation cannot carry them, and a partial view is still
// data (the Collector sees fewer instances). Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/http.h"
#include "core/metric_source.h"
#include "core/scale.h"
#include "monitor/presets.h"
#include "monitor/scrape_eval.h"

namespace aiscale::monitor {

struct ScrapeSourceConfig {
  std::string name;
  std::string preset;             // "", dcgm, vllm, training
  bool replicas = false;          // targets: replicas (endpoints from the resolver)
  std::vector<std::string> urls;  // targets: [url, ...]
  std::string path = "/metrics";  // for replicas
  Duration timeout = Seconds(2);  // per request (a query's own timeout caps it further)
  size_t max_body_bytes = 16u << 20;
  size_t max_series = 1'000'000;  // per target and scrape (ParseLimits::max_samples)
  Duration window = Seconds(30);

  // Reads one `sources:` entry; errors (unknown fields, bad values) go to node's ConfigErrors
  // with field paths. `name` and `type` are accepted (the caller reads them too).
  static ScrapeSourceConfig Parse(const config::ConfigNode& node);
};

// Where a workload's replicas are (an actuator's Endpoints); empty when none can say.
using EndpointResolver = std::function<Result<std::vector<ReplicaEndpoint>>(const WorkloadRef&)>;

class ScrapeSource final : public MetricSource {
 public:
  static constexpr Duration kReuseWithin = Seconds(1);
  static constexpr size_t kMaxHistory = 64;

  ScrapeSource(ScrapeSourceConfig cfg, HttpClient& http, EndpointResolver resolver);

  std::string_view Name() const override { return cfg_.name; }
  FetchResult Fetch(const MetricQuery& q, TimePoint now) override;

 private:
  struct Target {
    std::string url;
    std::string instance;  // replica name, or host:port of the URL
    bool from_replica = false;
    bool ready = true;
  };
  // A target's recent scrapes; its mutex is held while its one request is in flight.
  struct TargetState {
    std::mutex mu;
    std::vector<Scrape> history;  // oldest first
    bool attempted = false;
    TimePoint last_attempt{};
    TimePoint last_used{};  // guarded by states_mu_: states unused for long are dropped
    Status last_error;      // of the last attempt
  };
  // How to turn a target's scrapes into values: a preset mapping or a parsed selector.
  struct Plan {
    const PresetSignal* preset_signal = nullptr;
    Selector selector;
  };

  Result<std::vector<Target>> Targets(const WorkloadRef& w) const;
  Result<Plan> PlanFor(const MetricQuery& q) const;
  FetchResult FetchTarget(const Target& t, const Plan& plan, const MetricQuery& q, TimePoint now);
  // One Observation per point, named after the target and the label telling points apart.
  std::vector<Observation> ToObservations(const Target& t, const std::string& signal,
                                          const std::vector<SeriesPoint>& points) const;
  // The target's history after making sure it holds a scrape at (about) `now`.
  Result<std::vector<Scrape>> ScrapeAt(const Target& t, TimePoint now, Duration timeout);
  Result<Scrape> ScrapeOnce(const std::string& url, TimePoint now, Duration timeout);
  void Prune(std::vector<Scrape>& history, TimePoint now) const;
  // The state of `url`, created on first use; drops states no query has used for a while
  // (replicas come and go).
  std::shared_ptr<TargetState> StateFor(const std::string& url, TimePoint now);

  ScrapeSourceConfig cfg_;
  const Preset* preset_;
  HttpClient& http_;
  EndpointResolver resolver_;
  std::mutex states_mu_;
  std::map<std::string, std::shared_ptr<TargetState>> states_;  // by URL
};

}  // namespace aiscale::monitor
