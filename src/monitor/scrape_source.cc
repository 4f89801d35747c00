#include "monitor/scrape_source.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

namespace aiscale::monitor {
namespace {

constexpr const char* kAccept =
    "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1";

// "16Mi", "512Ki", "1Gi" (binary), "16M", "16MB" (decimal), or a plain number of bytes.
bool ParseBytes(std::string s, double* out) {
  if (!s.empty() && (s.back() == 'B' || s.back() == 'b')) s.pop_back();
  double mult = 1;
  auto strip = [&](std::string_view suf, double m) {
    if (s.size() > suf.size() && s.ends_with(suf)) {
      s.resize(s.size() - suf.size());
      mult = m;
      return true;
    }
    return false;
  };
  strip("Ki", 1024.0) || strip("Mi", 1024.0 * 1024) || strip("Gi", 1024.0 * 1024 * 1024) ||
      strip("K", 1e3) || strip("k", 1e3) || strip("M", 1e6) || strip("G", 1e9);
  if (s.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(v) || v < 0) return false;
  *out = v * mult;
  return true;
}

size_t ReadBytes(const config::ConfigNode& node, const std::string& key, size_t fallback) {
  const config::ConfigNode n = node.Child(key);
  if (!n.IsDefined()) return fallback;
  double v = 0;
  if (!n.raw().IsScalar() || !ParseBytes(n.raw().Scalar(), &v)) {
    node.ErrorAt(key, "must be a size like 16Mi, 512Ki or a number of bytes");
    return fallback;
  }
  if (v < 1024 || v > 1024.0 * 1024 * 1024) {
    node.ErrorAt(key, "must be between 1Ki and 1Gi");
    return fallback;
  }
  return static_cast<size_t>(v);
}

bool IsHttpUrl(std::string_view u) {
  return (u.starts_with("http://") && u.size() > 7) || (u.starts_with("https://") && u.size() > 8);
}

// host:port of a URL ("http://10.0.0.5:9400/metrics" -> "10.0.0.5:9400").
std::string HostPort(std::string_view url) {
  size_t b = url.find("://");
  b = b == std::string_view::npos ? 0 : b + 3;
  size_t e = url.find_first_of("/?#", b);
  return std::string(url.substr(b, e == std::string_view::npos ? url.npos : e - b));
}

const std::string* FindLabel(const SeriesPoint& p, std::string_view name) {
  for (const auto& [k, v] : p.labels) {
    if (k == name) return &v;
  }
  return nullptr;
}

// The label that tells a target's series apart: the first preferred label present on every
// point with distinct values ("" when none does). Hashes views of the values: linear time.
std::string PickSeriesLabel(const std::vector<SeriesPoint>& points,
                            const std::vector<std::string_view>& preferred) {
  std::unordered_set<std::string_view> values;
  for (std::string_view l : preferred) {
    values.clear();
    values.reserve(points.size());
    for (const SeriesPoint& p : points) {
      const std::string* v = FindLabel(p, l);
      if (v == nullptr || !values.insert(*v).second) break;  // absent or repeated: not this one
    }
    if (values.size() == points.size()) return std::string(l);
  }
  return "";
}

// The names of the labels whose values are not the same on every point (absent on some, or
// different): what tells the points apart when no preferred label does. One pass over every
// label of every point, not each point against every other (that was quadratic: 50,000 series
// took 10 s to name).
std::unordered_set<std::string_view> DifferingLabelNames(const std::vector<SeriesPoint>& points) {
  struct Seen {
    std::string_view first;  // the first value seen
    size_t count = 0;        // points carrying the label
    bool same = true;
  };
  std::unordered_map<std::string_view, Seen> seen;
  for (const SeriesPoint& p : points) {
    for (const auto& [k, v] : p.labels) {
      Seen& s = seen[k];
      if (s.count++ == 0) {
        s.first = v;
      } else if (s.same && s.first != v) {
        s.same = false;
      }
    }
  }
  std::unordered_set<std::string_view> out;
  for (const auto& [k, s] : seen) {
    if (!s.same || s.count != points.size()) out.insert(k);
  }
  return out;
}

// "k=v,k2=v2" of p's labels named in `differing`, in p's order.
std::string DifferingLabels(const SeriesPoint& p,
                            const std::unordered_set<std::string_view>& differing) {
  std::string out;
  for (const auto& [k, v] : p.labels) {
    if (!differing.count(k)) continue;
    if (!out.empty()) out += ',';
    out += k;
    out += '=';
    out += v;
  }
  return out;
}

}  // namespace

ScrapeSourceConfig ScrapeSourceConfig::Parse(const config::ConfigNode& node) {
  ScrapeSourceConfig c;
  node.CheckKnown({"name", "type", "preset", "targets", "path", "timeout", "max_body_bytes",
                   "max_series", "window"});
  c.name = node.String("name", "");
  c.preset = node.Enum("preset", "", {"", "dcgm", "vllm", "training"});
  const config::ConfigNode targets = node.Child("targets");
  if (!targets.IsDefined()) {
    node.Error("missing required field 'targets' (replicas, or a list of URLs)");
  } else if (targets.IsSequence()) {
    for (const config::ConfigNode& item : targets.Items()) {
      if (item.raw().IsScalar() && IsHttpUrl(item.raw().Scalar())) {
        c.urls.push_back(item.raw().Scalar());
      } else {
        item.Error("must be a URL like http://127.0.0.1:9400/metrics");
      }
    }
    if (c.urls.empty() && targets.Items().empty()) node.ErrorAt("targets", "must not be empty");
  } else if (targets.raw().IsScalar() && targets.raw().Scalar() == "replicas") {
    c.replicas = true;
  } else {
    node.ErrorAt("targets", "must be 'replicas' or a list of URLs");
  }
  c.path = node.String("path", "/metrics");
  if (c.path.empty() || c.path.front() != '/') node.ErrorAt("path", "must start with '/'");
  c.timeout = Seconds(node.DurationSeconds("timeout", 2, config::Above(0)));
  c.window = Seconds(node.DurationSeconds("window", 30, config::Above(0)));
  c.max_body_bytes = ReadBytes(node, "max_body_bytes", c.max_body_bytes);
  c.max_series = static_cast<size_t>(
      node.Int("max_series", static_cast<int>(c.max_series), config::Between(1, 10'000'000)));
  return c;
}

ScrapeSource::ScrapeSource(ScrapeSourceConfig cfg, HttpClient& http, EndpointResolver resolver)
    : cfg_(std::move(cfg)),
      preset_(FindPreset(cfg_.preset)),
      http_(http),
      resolver_(std::move(resolver)) {}

FetchResult ScrapeSource::Fetch(const MetricQuery& q, TimePoint now) {
  const std::string what = "unable to get " + q.signal + " for " + q.workload.Key();
  auto plan = PlanFor(q);
  if (!plan.ok()) return plan.status().Wrap(what);
  auto targets = Targets(q.workload);
  if (!targets.ok()) return targets.status().Wrap(what);
  if (targets->empty()) return Status::NotFound(what + ": no replica endpoints to scrape");

  std::vector<FetchResult> results;
  if (targets->size() == 1) {
    results.push_back(FetchTarget(targets->front(), *plan, q, now));
  } else {
    std::vector<std::future<FetchResult>> futures;
    for (const Target& t : *targets) {
      try {
        futures.push_back(std::async(std::launch::async,
                                     [&, tp = &t] { return FetchTarget(*tp, *plan, q, now); }));
      } catch (const std::system_error&) {  // no thread to spare: do this one here
        std::promise<FetchResult> done;
        done.set_value(FetchTarget(t, *plan, q, now));
        futures.push_back(done.get_future());
      }
    }
    for (auto& f : futures) results.push_back(f.get());
  }

  std::vector<Observation> out;
  std::string failures;
  const Status* first_error = nullptr;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok()) {
      out.insert(out.end(), results[i]->begin(), results[i]->end());
      continue;
    }
    if (first_error == nullptr) first_error = &results[i].status();
    failures +=
        (failures.empty() ? "" : "; ") + (*targets)[i].url + ": " + results[i].status().message();
  }
  // Every target failed: that is an error. Some answered: their data is the result.
  if (first_error != nullptr &&
      std::none_of(results.begin(), results.end(), [](const auto& r) { return r.ok(); })) {
    return Status::FromCode(first_error->code(), what + ": " + failures);
  }
  return out;
}

Result<ScrapeSource::Plan> ScrapeSource::PlanFor(const MetricQuery& q) const {
  Plan plan;
  if (!q.expression.empty()) {
    ASSIGN_OR_RETURN(plan.selector, ParseSelector(q.expression));
    return plan;
  }
  if (preset_ == nullptr || preset_->name.empty()) {
    return Status::Invalid("source " + cfg_.name + " has no preset, so signal " + q.signal +
                           " needs an expression (a metric selector)");
  }
  plan.preset_signal = preset_->Find(q.signal);
  if (plan.preset_signal == nullptr) {
    return Status::Invalid("preset " + std::string(preset_->name) + " has no mapping for signal " +
                           q.signal + "; give an expression");
  }
  return plan;
}

Result<std::vector<ScrapeSource::Target>> ScrapeSource::Targets(const WorkloadRef& w) const {
  std::vector<Target> out;
  if (!cfg_.replicas) {
    for (const std::string& url : cfg_.urls) out.push_back(Target{url, HostPort(url), false, true});
    return out;
  }
  if (!resolver_) {
    return Status::Invalid(
        "targets: replicas needs an actuator that reports replica endpoints, "
        "and none does for this workload");
  }
  ASSIGN_OR_RETURN(std::vector<ReplicaEndpoint> eps, resolver_(w));
  for (const ReplicaEndpoint& ep : eps) {
    const std::string host = ep.host.find(':') != std::string::npos ? "[" + ep.host + "]" : ep.host;
    const std::string hp = host + ":" + std::to_string(ep.port);
    out.push_back(
        Target{"http://" + hp + cfg_.path, ep.instance.empty() ? hp : ep.instance, true, ep.ready});
  }
  return out;
}

FetchResult ScrapeSource::FetchTarget(const Target& t, const Plan& plan, const MetricQuery& q,
                                      TimePoint now) {
  ASSIGN_OR_RETURN(std::vector<Scrape> history,
                   ScrapeAt(t, now, std::min(cfg_.timeout, q.timeout)));
  // A stopping daemon does not wait out a huge target: each step asks the client.
  const std::function<bool()> cancelled = [this] { return http_.Cancelled(); };
  auto points = plan.preset_signal != nullptr
                    ? EvaluatePresetSignal(*plan.preset_signal, history, cancelled)
                    : EvaluateSelector(plan.selector, history, cancelled);
  if (!points.ok()) return points.status();
  std::vector<Observation> out = ToObservations(t, q.signal, *points);
  if (http_.Cancelled()) return Status::Unavailable("cancelled: stopping");
  return out;
}

std::vector<Observation> ScrapeSource::ToObservations(
    const Target& t, const std::string& signal, const std::vector<SeriesPoint>& points) const {
  static const std::vector<std::string_view> kDefaultSeriesLabels = {
      "gpu", "UUID", "uuid", "pod", "engine", "rank", "model_name"};
  const bool has_preset = preset_ != nullptr && !preset_->name.empty();
  const auto& preferred =
      has_preset && !preset_->series_labels.empty() ? preset_->series_labels : kDefaultSeriesLabels;
  const bool name_series = (has_preset && preset_->always_name_series) || points.size() > 1;
  const std::string label = name_series ? PickSeriesLabel(points, preferred) : "";
  std::unordered_set<std::string_view> differing;
  if (name_series && label.empty()) differing = DifferingLabelNames(points);
  std::vector<Observation> out;
  out.reserve(points.size());
  for (const SeriesPoint& p : points) {
    if ((out.size() & 4095) == 4095 && http_.Cancelled()) break;  // the caller says why
    Observation o;
    o.signal = signal;
    o.instance = t.instance;
    // A fixed URL (a dcgm-exporter per node) says less than the node's own Hostname label.
    if (has_preset && !t.from_replica) {
      for (std::string_view hl : preset_->host_labels) {
        if (const std::string* v = FindLabel(p, hl); v != nullptr && !v->empty()) {
          o.instance = *v;
          break;
        }
      }
    }
    if (name_series) {
      const std::string* v = label.empty() ? nullptr : FindLabel(p, label);
      const std::string suffix = v == nullptr ? DifferingLabels(p, differing)
                                 : has_preset ? std::string(preset_->series_prefix) + *v
                                              : *v;
      if (!suffix.empty()) o.instance += "/" + suffix;
    }
    o.value = p.value;
    o.at = p.at;
    o.ready = t.ready;
    o.per_replica = t.from_replica;
    out.push_back(std::move(o));
  }
  return out;
}

Result<std::vector<Scrape>> ScrapeSource::ScrapeAt(const Target& t, TimePoint now,
                                                   Duration timeout) {
  std::shared_ptr<TargetState> st = StateFor(t.url, now);
  std::lock_guard<std::mutex> lock(st->mu);
  const Duration since = now - st->last_attempt;
  if (st->attempted && since <= kReuseWithin && since >= -kReuseWithin) {
    if (!st->last_error.ok()) return st->last_error;
    return st->history;
  }
  st->attempted = true;
  st->last_attempt = now;
  auto s = ScrapeOnce(t.url, now, timeout);
  if (!s.ok()) {
    st->last_error = s.status();
    return s.status();
  }
  st->last_error = Status::Ok();
  // A clock that went back (a restarted simulation) makes the old scrapes meaningless.
  if (!st->history.empty() && st->history.back().at > now) st->history.clear();
  st->history.push_back(std::move(s).value());
  Prune(st->history, now);
  return st->history;
}

Result<Scrape> ScrapeSource::ScrapeOnce(const std::string& url, TimePoint now, Duration timeout) {
  HttpRequest req;
  req.url = url;
  req.timeout = timeout;
  req.max_body_bytes = cfg_.max_body_bytes;
  req.headers = {{"Accept", kAccept}};
  ASSIGN_OR_RETURN(HttpResponse resp, http_.Send(req));
  if (resp.status < 200 || resp.status >= 300) {
    return StatusFromHttp(resp.status, resp.body.substr(0, 200));
  }
  const ExpositionFormat format = FormatFromContentType(resp.Header("content-type"));
  ParseLimits limits;
  limits.max_bytes = cfg_.max_body_bytes;
  limits.max_samples = cfg_.max_series;
  limits.cancelled = [this] { return http_.Cancelled(); };  // a huge parse stops on a stop
  auto e = ParseExposition(std::move(resp.body), format, limits);
  if (!e.ok()) return e.status().Wrap("malformed exposition");
  return Scrape{now, std::make_shared<const Exposition>(std::move(e).value())};
}

void ScrapeSource::Prune(std::vector<Scrape>& history, TimePoint now) const {
  // Keep the newest scrape at or before now - window (the baseline) and all after it, but no
  // baseline older than two windows: a target back after an outage, or a new process on a
  // reused port, was measured against a counter minutes old (20 req/s read as 1) where it
  // should read nothing until its next scrape.
  size_t keep_from = 0;
  for (size_t i = 0; i < history.size(); ++i) {
    if (history[i].at <= now - cfg_.window) keep_from = i;
  }
  if (history[keep_from].at < now - 2 * cfg_.window) ++keep_from;
  keep_from = std::max(keep_from, history.size() > kMaxHistory ? history.size() - kMaxHistory : 0);
  history.erase(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(keep_from));
}

std::shared_ptr<ScrapeSource::TargetState> ScrapeSource::StateFor(const std::string& url,
                                                                  TimePoint now) {
  std::lock_guard<std::mutex> lock(states_mu_);
  const Duration idle = std::max<Duration>(10 * cfg_.window, Seconds(600));
  for (auto it = states_.begin(); it != states_.end();) {
    it = it->second->last_used < now - idle ? states_.erase(it) : std::next(it);
  }
  std::shared_ptr<TargetState>& st = states_[url];
  if (!st) st = std::make_shared<TargetState>();
  st->last_used = now;
  return st;
}

}  // namespace aiscale::monitor
