// PrometheusSource: a MetricSource that answers each signal with an instant PromQL query
// against a Prometheus-compatible HTTP API (/api/v1/query).
//
// A query's expression is a template (monitor/query_template.h). FetchBatch sends ONE request
// per batchable template per round (LABEL="{workload}" becomes LABEL=~"a|b|...") and routes
// each returned series to the workload named by its LABEL value; the others are sent one by
// one. Observation.instance is the series' `pod` label, else `instance`, else its labels
// rendered compactly, else empty (a `pod` label marks the observation per_replica);
// Observation.at is the sample's timestamp (wall-anchored TimePoint, so Seconds(unix_ts)). A
// query's max_age is sent as lookback_delta (a batch sends its members' shortest), so samples
// Prometheus would serve from its lookback are not returned as fresh.
//
// Errors read "unable to query prometheus <name> for <signal> of <workload>: <cause>" with a
// code: refused/reset/5xx kUnavailable, timeout kDeadlineExceeded, a Prometheus error by its
// errorType, a malformed answer kInvalid. The bearer token is re-read when its file changes
// and never appears in a message. Thread-safe: the token cache has a lock; the HttpClient,
// which must outlive the source, is thread-safe by contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/http.h"
#include "core/metric_source.h"

namespace aiscale::monitor {

struct PrometheusSourceConfig {
  std::string name = "prometheus";
  std::string url;                    // required, http:// or https://, may carry a path prefix
  Duration timeout = Seconds(2);      // per request; a query's own shorter timeout wins
  std::string bearer_token_file;      // empty: no Authorization header
  TlsOptions tls;                     // tls: {ca_file, cert_file, key_file, insecure_skip_verify}
  size_t max_body_bytes = 16u << 20;  // max_body_bytes: 16Mi (also 1048576, 512Ki, 1Gi, 10M)
  bool batch = true;                  // batch: false sends one request per query
  size_t max_get_url_bytes = 8192;    // longer requests are POSTed as a form body
  size_t max_batch_regex_bytes = 256u << 10;  // a batch's regex larger than this is split

  // Reads one entry of a controller config's `sources:` list. Errors are recorded in the
  // node's ConfigErrors with field paths; unknown fields are rejected. Relative file paths
  // resolve against the config file's directory.
  static PrometheusSourceConfig Parse(const config::ConfigNode& node);
};

class PrometheusSource final : public MetricSource {
 public:
  PrometheusSource(PrometheusSourceConfig cfg, HttpClient& http);

  std::string_view Name() const override { return cfg_.name; }
  FetchResult Fetch(const MetricQuery& q, TimePoint now) override;
  std::vector<FetchResult> FetchBatch(const std::vector<MetricQuery>& qs, TimePoint now) override;

 private:
  struct Group;  // queries that one request answers

  // Sends one PromQL query; the raw body parsed, or why not (cause only, not yet wrapped).
  struct Answer;
  // `lookback` > 0 asks Prometheus for no sample older than it (lookback_delta).
  Answer Query(const std::string& promql, Duration timeout, Duration lookback);
  // The query's PromQL for its workload, or a wrapped kInvalid.
  Result<std::string> Expanded(const MetricQuery& q) const;
  FetchResult Convert(const Answer& a, const MetricQuery& q) const;
  // Answers `idx` one request per distinct expanded query.
  void FetchEach(const std::vector<size_t>& idx, const std::vector<MetricQuery>& qs,
                 std::vector<FetchResult>& out);
  void FetchGroup(const Group& g, const std::vector<MetricQuery>& qs,
                  std::vector<FetchResult>& out);
  Status BearerToken(std::string& token);
  std::string Wrap(const MetricQuery& q, const Status& cause) const;

  const PrometheusSourceConfig cfg_;
  HttpClient& http_;
  std::string query_url_;  // <url>/api/v1/query

  // Identity of the token file's content as last read: a rotation (new file renamed over,
  // or a Kubernetes ..data symlink swap) changes the inode or the modification time.
  struct FileStamp {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileStamp&) const = default;
  };
  std::mutex token_mu_;  // guards the cache below
  std::string token_;
  FileStamp token_stamp_;
  bool token_loaded_ = false;
};

}  // namespace aiscale::monitor
