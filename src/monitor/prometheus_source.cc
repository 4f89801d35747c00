#include "monitor/prometheus_source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/bounded_file.h"
#include "monitor/promql_response.h"
#include "monitor/query_template.h"

namespace aiscale::monitor {
namespace {

// application/x-www-form-urlencoded and query-string encoding: every byte but the unreserved
// ones percent-encoded, so PromQL's braces, quotes and pipes survive any proxy.
std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3 / 2);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}

// Belt and braces: no message may carry the bearer token, even if a server echoes it back.
void Redact(std::string& message, const std::string& token) {
  if (token.size() >= 8) ReplaceAll(message, token, "<redacted>");
}

// `pod`, else `instance`, else the labels but __name__ as "k=v,k=v", else empty.
std::string InstanceOf(const PromSeries& s) {
  if (const std::string* pod = s.Label("pod")) return *pod;
  if (const std::string* inst = s.Label("instance")) return *inst;
  std::string out;
  for (const auto& [k, v] : s.labels) {
    if (k == "__name__") continue;
    if (!out.empty()) out += ',';
    out += k + "=" + v;
  }
  return out;
}

// One observation per series, named by InstanceOf; several series of one name (a dcgm query's
// GPUs of one pod, a data-parallel server's engines) are told apart by the labels that differ
// among them ("<pod>/gpu=0"): by name alone they were merged into one arbitrary value. Series
// that differ in no label stay one name (a duplicate, kept once downstream).
std::vector<Observation> ToObservations(const std::vector<const PromSeries*>& series,
                                        const std::string& signal) {
  std::vector<Observation> out;
  out.reserve(series.size());
  std::map<std::string, std::vector<size_t>> by_name;
  for (const PromSeries* s : series) {
    // Seconds() saturates: a sample stamped centuries ahead reads as far in the future
    // (invalid in WorkloadSignals), never as a wrapped "about now". A `pod` label names a
    // replica.
    Observation o{signal, InstanceOf(*s), s->value, TimePoint(Seconds(s->timestamp_s)), true};
    o.per_replica = s->Label("pod") != nullptr;
    by_name[o.instance].push_back(out.size());
    out.push_back(std::move(o));
  }
  for (const auto& [name, idx] : by_name) {
    if (idx.size() < 2) continue;
    std::set<std::string> differ;
    for (size_t i : idx) {
      for (const auto& [k, v] : series[i]->labels) {
        const std::string* first = series[idx[0]]->Label(k);
        if (k != "__name__" && (first == nullptr || *first != v)) differ.insert(k);
      }
      for (const auto& [k, v] : series[idx[0]]->labels) {
        if (k != "__name__" && series[i]->Label(k) == nullptr) differ.insert(k);
      }
    }
    if (differ.empty()) continue;
    for (size_t i : idx) {
      std::string suffix;
      for (const std::string& k : differ) {
        const std::string* v = series[i]->Label(k);
        if (!suffix.empty()) suffix += ',';
        suffix += k + "=" + (v ? *v : "");
      }
      out[i].instance = name + "/" + suffix;
    }
  }
  return out;
}

std::vector<Observation> ToObservations(const std::vector<PromSeries>& series,
                                        const std::string& signal) {
  std::vector<const PromSeries*> ptrs;
  ptrs.reserve(series.size());
  for (const PromSeries& s : series) ptrs.push_back(&s);
  return ToObservations(ptrs, signal);
}

// The shortest max_age the queries in `idx` ask for (zero when none asks).
Duration LookbackOf(const std::vector<MetricQuery>& qs, const std::vector<size_t>& idx) {
  Duration out{};
  for (size_t i : idx) {
    const Duration a = qs[i].max_age;
    if (a > Duration::zero() && (out == Duration::zero() || a < out)) out = a;
  }
  return out;
}

Duration TimeoutOf(const MetricQuery& q, Duration source_timeout) {
  return q.timeout > Duration::zero() ? std::min(q.timeout, source_timeout) : source_timeout;
}

// "16Mi", "512Ki", "1Gi", "10M", "1048576"; false on anything else.
bool ParseByteSize(const std::string& s, double& out) {
  static const std::pair<const char*, double> kUnits[] = {
      {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"K", 1e3},
      {"k", 1e3},     {"M", 1e6},        {"G", 1e9},           {"", 1.0}};
  for (const auto& [suffix, mult] : kUnits) {
    const size_t n = std::strlen(suffix);
    if (s.size() <= n || s.compare(s.size() - n, n, suffix) != 0) continue;
    const std::string num = s.substr(0, s.size() - n);
    if (num.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::strtod(num.c_str(), nullptr) * mult;  // digits only: cannot fail, may be inf
    return true;
  }
  return false;
}

size_t ReadByteSize(const config::ConfigNode& node, const std::string& key, size_t fallback) {
  if (!node.Has(key)) return fallback;
  const std::string s = node.String(key, "");
  double v = 0;
  if (!ParseByteSize(s, v) || v < 1024 || v > 4294967296.0) {
    node.ErrorAt(key, "must be a size from 1Ki to 4Gi like 16Mi or 1048576, got '" + s + "'");
    return fallback;
  }
  return static_cast<size_t>(v);
}

void ParseTls(const config::ConfigNode& tls, TlsOptions& out) {
  if (!tls.IsDefined()) return;
  tls.CheckKnown({"ca_file", "cert_file", "key_file", "insecure_skip_verify"});
  out.ca_file = tls.ResolvePath(tls.String("ca_file", ""));
  out.client_cert_file = tls.ResolvePath(tls.String("cert_file", ""));
  out.client_key_file = tls.ResolvePath(tls.String("key_file", ""));
  out.insecure_skip_verify = tls.Bool("insecure_skip_verify", false);
  if (out.client_cert_file.empty() != out.client_key_file.empty()) {
    tls.Error("cert_file and key_file go together");
  }
}

}  // namespace

PrometheusSourceConfig PrometheusSourceConfig::Parse(const config::ConfigNode& node) {
  PrometheusSourceConfig c;
  node.CheckKnown(
      {"name", "type", "url", "timeout", "bearer_token_file", "tls", "max_body_bytes", "batch"});
  c.name = node.String("name", c.name);
  node.Enum("type", "prometheus", {"prometheus"});
  c.url = node.RequiredString("url");
  if (node.Has("url") && c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0) {
    node.ErrorAt("url", "must start with http:// or https://, got '" + c.url + "'");
  }
  while (!c.url.empty() && c.url.back() == '/') c.url.pop_back();
  c.timeout =
      Seconds(node.DurationSeconds("timeout", ToSeconds(c.timeout), config::Between(0.001, 600)));
  c.bearer_token_file = node.ResolvePath(node.String("bearer_token_file", ""));
  ParseTls(node.Child("tls"), c.tls);
  c.max_body_bytes = ReadByteSize(node, "max_body_bytes", c.max_body_bytes);
  c.batch = node.Bool("batch", c.batch);
  return c;
}

struct PrometheusSource::Group {
  BatchPlan plan;
  std::vector<size_t> members;  // indices into the batch's queries
};

struct PrometheusSource::Answer {
  Status status;
  PromQueryResult result;
};

PrometheusSource::PrometheusSource(PrometheusSourceConfig cfg, HttpClient& http)
    : cfg_(std::move(cfg)), http_(http), query_url_(cfg_.url + "/api/v1/query") {}

std::string PrometheusSource::Wrap(const MetricQuery& q, const Status& cause) const {
  return "unable to query prometheus " + cfg_.name + " for " + q.signal + " of " +
         q.workload.Key() + ": " + cause.message();
}

Status PrometheusSource::BearerToken(std::string& token) {
  token.clear();
  if (cfg_.bearer_token_file.empty()) return Status::Ok();
  const std::string& path = cfg_.bearer_token_file;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::Unavailable("unable to read bearer_token_file " + path + ": " +
                               std::strerror(errno));
  }
  const FileStamp stamp{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                        static_cast<uint64_t>(st.st_size),
                        static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
  std::lock_guard<std::mutex> lock(token_mu_);
  if (!token_loaded_ || !(stamp == token_stamp_)) {
    // Bounded, regular files only (core/bounded_file.h): never a FIFO that blocks a tick.
    auto text = ReadBoundedFile(path, kSecretFileLimit);
    if (!text.ok()) {
      return Status::Unavailable("bearer_token_file: " + text.status().message());
    }
    std::string t = std::move(*text);
    t.erase(0, t.find_first_not_of(" \t\r\n"));
    t.erase(t.find_last_not_of(" \t\r\n") + 1);
    if (t.empty()) return Status::Unavailable("bearer_token_file " + path + " is empty");
    token_ = std::move(t);
    token_stamp_ = stamp;
    token_loaded_ = true;
  }
  token = token_;
  return Status::Ok();
}

PrometheusSource::Answer PrometheusSource::Query(const std::string& promql, Duration timeout,
                                                 Duration lookback) {
  std::string token;
  if (Status st = BearerToken(token); !st.ok()) return {st, {}};
  HttpRequest req;
  req.timeout = timeout;
  req.max_body_bytes = cfg_.max_body_bytes;
  req.tls = cfg_.tls;
  const long long ms = std::max<long long>(1, timeout.count() / 1000000);
  std::string form = "query=" + UrlEncode(promql) + "&timeout=" + std::to_string(ms) + "ms";
  if (lookback > Duration::zero()) {
    // An instant query stamps every sample with the evaluation time, so a sample served from
    // Prometheus's 5-minute lookback (a replica stopped minutes ago, more so right after a
    // Prometheus restart) looks fresh here. Asking for no older samples is the only way to
    // see its age; servers before lookback_delta ignore the parameter.
    form += "&lookback_delta=";
    form += std::to_string(std::max<long long>(1, lookback.count() / 1000000));
    form += "ms";
  }
  if (query_url_.size() + 1 + form.size() <= cfg_.max_get_url_bytes) {
    req.url = query_url_ + "?" + form;
  } else {  // the API takes the same parameters as a form body (docs/querying/api.md)
    req.method = "POST";
    req.url = query_url_;
    req.body = form;
    req.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  }
  req.headers.emplace_back("Accept", "application/json");
  if (!token.empty()) req.headers.emplace_back("Authorization", "Bearer " + token);

  Result<HttpResponse> resp = http_.Send(req);
  if (!resp.ok()) {
    // The transport names the URL; keep the message short (no 8 KB query) and token-free.
    std::string m = resp.status().message();
    ReplaceAll(m, req.url, query_url_);
    Redact(m, token);
    return {Status::FromCode(resp.status().code(), m), {}};
  }
  PromParseLimits limits;
  limits.max_bytes = cfg_.max_body_bytes;
  Result<PromQueryResult> parsed = ParsePromQueryResponse(resp->body, resp->status, limits);
  if (!parsed.ok()) {
    std::string m = parsed.status().message();
    Redact(m, token);
    return {Status::FromCode(parsed.status().code(), m), {}};
  }
  return {Status::Ok(), std::move(parsed).value()};
}

Result<std::string> PrometheusSource::Expanded(const MetricQuery& q) const {
  if (q.expression.empty()) {
    return Status::Invalid(Wrap(q, Status::Invalid("the signal has no PromQL expression")));
  }
  Result<std::string> promql = ExpandTemplate(q.expression, q.workload);
  if (!promql.ok()) return Status::Invalid(Wrap(q, promql.status()));
  return promql;
}

FetchResult PrometheusSource::Convert(const Answer& a, const MetricQuery& q) const {
  if (!a.status.ok()) return Status::FromCode(a.status.code(), Wrap(q, a.status));
  return ToObservations(a.result.series, q.signal);
}

FetchResult PrometheusSource::Fetch(const MetricQuery& q, TimePoint /*now*/) {
  Result<std::string> promql = Expanded(q);
  if (!promql.ok()) return promql.status();
  return Convert(Query(*promql, TimeoutOf(q, cfg_.timeout), q.max_age), q);
}

void PrometheusSource::FetchEach(const std::vector<size_t>& idx, const std::vector<MetricQuery>& qs,
                                 std::vector<FetchResult>& out) {
  // Identical expansions (a template without {workload}, two signals with one expression)
  // share one request.
  std::map<std::string, std::vector<size_t>> by_promql;
  for (size_t i : idx) {
    Result<std::string> promql = Expanded(qs[i]);
    if (promql.ok()) {
      by_promql[*promql].push_back(i);
    } else {
      out[i] = promql.status();
    }
  }
  for (const auto& [promql, members] : by_promql) {
    Duration timeout = cfg_.timeout;
    for (size_t i : members) timeout = std::min(timeout, TimeoutOf(qs[i], cfg_.timeout));
    const Answer a = Query(promql, timeout, LookbackOf(qs, members));
    for (size_t i : members) out[i] = Convert(a, qs[i]);
  }
}

void PrometheusSource::FetchGroup(const Group& g, const std::vector<MetricQuery>& qs,
                                  std::vector<FetchResult>& out) {
  std::map<std::string, std::vector<size_t>> by_name;  // workload name -> query indices
  std::vector<std::string> names;
  for (size_t i : g.members) {
    auto& slot = by_name[qs[i].workload.name];
    if (slot.empty()) names.push_back(qs[i].workload.name);
    slot.push_back(i);
  }
  for (const std::vector<std::string>& chunk : ChunkNames(names, cfg_.max_batch_regex_bytes)) {
    const std::set<std::string_view> in_chunk(chunk.begin(), chunk.end());
    std::vector<size_t> members;
    Duration timeout = cfg_.timeout;
    for (const std::string& n : chunk) {
      for (size_t i : by_name[n]) {
        members.push_back(i);
        timeout = std::min(timeout, TimeoutOf(qs[i], cfg_.timeout));
      }
    }
    Answer a = Query(g.plan.Query(chunk), timeout, LookbackOf(qs, members));
    std::map<std::string_view, std::vector<const PromSeries*>> routed;  // workload -> series
    for (const PromSeries& s : a.result.series) {
      const std::string* name = s.Label(g.plan.label);
      if (name == nullptr) {
        const std::string& l = g.plan.label;
        a.status = Status::Invalid("the batched query returned a series without the label '" + l +
                                   "', so it cannot tell the workloads apart; keep " + l +
                                   " in the aggregation, e.g. sum by (pod, " + l +
                                   ") (...), or set batch: false on the source");
        break;
      }
      auto it = by_name.find(*name);
      if (it == by_name.end() || !in_chunk.count(*name)) continue;  // not asked for here
      routed[*name].push_back(&s);
    }
    for (const auto& [name, series] : routed) {
      for (size_t i : by_name.find(std::string(name))->second) {
        for (Observation& o : ToObservations(series, qs[i].signal)) {
          out[i].value().push_back(std::move(o));
        }
      }
    }
    if (a.status.ok()) continue;
    for (size_t i : members) out[i] = Status::FromCode(a.status.code(), Wrap(qs[i], a.status));
  }
}

std::vector<FetchResult> PrometheusSource::FetchBatch(const std::vector<MetricQuery>& qs,
                                                      TimePoint /*now*/) {
  std::vector<FetchResult> out(qs.size(), FetchResult(std::vector<Observation>{}));
  std::map<std::string, Group> groups;
  std::vector<size_t> singles;
  for (size_t i = 0; i < qs.size(); ++i) {
    std::optional<BatchPlan> plan;
    if (cfg_.batch && !qs[i].expression.empty()) plan = PlanBatch(qs[i].expression, qs[i].workload);
    if (!plan) {
      singles.push_back(i);
      continue;
    }
    const std::string key = plan->Key();
    Group& g = groups.try_emplace(key, Group{std::move(*plan), {}}).first->second;
    g.members.push_back(i);
  }
  for (const auto& [key, g] : groups) {
    if (g.members.size() == 1) {
      singles.push_back(g.members.front());  // the plain query needs no routing label
    } else {
      FetchGroup(g, qs, out);
    }
  }
  FetchEach(singles, qs, out);
  return out;
}

}  // namespace aiscale::monitor
