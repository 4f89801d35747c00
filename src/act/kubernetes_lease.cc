#include "act/kubernetes_lease.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <random>

namespace aiscale::act {
namespace {

using nlohmann::json;

constexpr const char* kLeaderGauge = "aiscale_leader";
// The most a follower adds to a retry period between attempts, as a fraction of it (client-go).
constexpr double kAcquireJitterFactor = 1.2;

bool IsDnsName(const std::string& s) {
  return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
  });
}

std::string SecondsText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

int WholeSeconds(Duration d) {
  return static_cast<int>(std::max<int64_t>(1, d.count() / 1000000000));
}

std::string SpecHolder(const json& lease) {
  if (!lease.is_object() || !lease.contains("spec") || !lease["spec"].is_object()) return "";
  const json& h = lease["spec"].value("holderIdentity", json());
  return h.is_string() ? h.get<std::string>() : "";
}

int SpecInt(const json& spec, const char* key, int fallback) {
  if (!spec.is_object() || !spec.contains(key) || !spec[key].is_number_integer()) return fallback;
  return spec[key].get<int>();
}

}  // namespace

LeaderElectionConfig LeaderElectionConfig::Parse(const config::ConfigNode& n) {
  LeaderElectionConfig c;
  if (!n.IsMap()) {
    n.Error("must be a map, e.g. {enabled: true, namespace: aiscale, name: aiscale}");
    return c;
  }
  n.CheckKnown({"enabled", "namespace", "name", "lease_duration", "renew_deadline", "retry_period",
                "identity", "auth"});
  c.enabled = n.Bool("enabled", true);
  c.namespace_ = n.String("namespace", c.namespace_);
  if (!IsDnsName(c.namespace_)) n.ErrorAt("namespace", "must be a DNS label (a-z, 0-9, '-')");
  c.name = n.String("name", c.name);
  if (!IsDnsName(c.name)) n.ErrorAt("name", "must be a DNS subdomain (a-z, 0-9, '-', '.')");
  c.identity = n.String("identity", "");
  if (n.Has("identity") && c.identity.empty()) n.ErrorAt("identity", "must not be empty");
  const double lease = n.DurationSeconds("lease_duration", 15, config::AtLeast(1));
  const double renew = n.DurationSeconds("renew_deadline", 10, config::Above(0));
  const double retry = n.DurationSeconds("retry_period", 2, config::Above(0));
  // As client-go's NewLeaderElector insists: the leader must give up before a follower can
  // see the lease expire, and must get more than one try within the deadline.
  if (renew >= lease) {
    n.ErrorAt(n.Has("renew_deadline") ? "renew_deadline" : "lease_duration",
              "renew_deadline (" + SecondsText(renew) + ") must be less than lease_duration (" +
                  SecondsText(lease) + ")");
  }
  if (retry >= renew) {
    n.ErrorAt(n.Has("retry_period") ? "retry_period" : "renew_deadline",
              "retry_period (" + SecondsText(retry) + ") must be less than renew_deadline (" +
                  SecondsText(renew) + ")");
  }
  c.lease_duration = Seconds(lease);
  c.renew_deadline = Seconds(renew);
  c.retry_period = Seconds(retry);
  c.auth = ParseKubeAuth(n);
  return c;
}

std::string DefaultLeaderIdentity() {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof host, "aiscale");
  }
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(rd()));
  return std::string(host) + "_" + std::to_string(::getpid()) + "_" + suffix;
}

std::string FormatMicroTime(WallTime t) {
  const auto since = t.time_since_epoch();
  const auto secs = std::chrono::floor<std::chrono::seconds>(since);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since - secs).count();
  const std::time_t tt = static_cast<std::time_t>(secs.count());
  std::tm tm{};
  if (!gmtime_r(&tt, &tm)) return "";
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%06dZ", static_cast<int>(micros));
  return std::string(buf, n) + frac;
}

std::string LeasePath(const std::string& ns, const std::string& name) {
  std::string p = "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases";
  return name.empty() ? p : p + "/" + name;
}

LeaseElector::LeaseElector(LeaderElectionConfig cfg, std::string identity,
                           std::unique_ptr<KubeClient> client, Clock& clock, Telemetry* telemetry)
    : cfg_(std::move(cfg)),
      identity_(std::move(identity)),
      client_(std::move(client)),
      clock_(clock),
      telemetry_(telemetry),
      path_(LeasePath(cfg_.namespace_, cfg_.name)),
      next_wait_(cfg_.retry_period),
      jitter_rng_(std::hash<std::string>{}(identity_)) {
  if (telemetry_) {
    telemetry_->DeclareGauge(kLeaderGauge,
                             "1 when this process holds the leader Lease and may apply, else 0.");
    telemetry_->Set(kLeaderGauge, {}, 0);
  }
}

bool LeaseElector::IsLeader() const {
  if (!leader_.load()) return false;
  return clock_.Now() < TimePoint(Duration(renewed_at_ns_.load())) + cfg_.renew_deadline;
}

std::string LeaseElector::Leader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return holder_;
}

std::string LeaseElector::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

void LeaseElector::SetError(std::string error) {
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = std::move(error);
}

void LeaseElector::SetLeader(bool leader, TimePoint renewed_at) {
  if (leader) renewed_at_ns_.store(renewed_at.time_since_epoch().count());
  leader_.store(leader);
  if (telemetry_) telemetry_->Set(kLeaderGauge, {}, IsLeader() ? 1 : 0);
}

json LeaseElector::HolderSpec(const json& old_spec, bool renewing) const {
  const std::string now = FormatMicroTime(clock_.WallNow());
  json s = {{"holderIdentity", identity_},
            {"leaseDurationSeconds", WholeSeconds(cfg_.lease_duration)},
            {"acquireTime", now},
            {"renewTime", now},
            {"leaseTransitions", 0}};
  if (renewing) {
    if (old_spec.is_object() && old_spec.contains("acquireTime")) {
      s["acquireTime"] = old_spec["acquireTime"];
    }
    s["leaseTransitions"] = SpecInt(old_spec, "leaseTransitions", 0);
  } else if (old_spec.is_object()) {
    s["leaseTransitions"] = SpecInt(old_spec, "leaseTransitions", 0) + 1;
  }
  return s;
}

void LeaseElector::Observe(const json& lease) {
  const json spec = lease.is_object() ? lease.value("spec", json::object()) : json::object();
  const std::string dump = spec.dump();
  if (dump != observed_spec_) {
    observed_spec_ = dump;
    observed_at_ = clock_.Now();
  }
  observed_ = lease;
  const std::string holder = SpecHolder(lease);
  {
    std::lock_guard<std::mutex> lock(mu_);
    holder_ = holder;
  }
  if (holder != identity_ && leader_.load()) SetLeader(false, {});
}

bool LeaseElector::ObservedValid(TimePoint now) const {
  const json spec = observed_.is_object() ? observed_.value("spec", json::object()) : json();
  const int secs = SpecInt(spec, "leaseDurationSeconds", 0);
  return observed_at_ + Seconds(secs) > now;
}

bool LeaseElector::Update(json lease, json spec, TimePoint start) {
  lease["spec"] = std::move(spec);
  Result<json> r = client_->Call("PUT", path_, lease.dump());
  if (!r.ok()) {
    SetError(r.status().IsConflict() ? "lost the race for lease " + cfg_.namespace_ + "/" +
                                           cfg_.name + " (409): " + r.status().message()
                                     : r.status().message());
    return false;
  }
  Observe(*r);
  SetLeader(true, start);
  SetError("");
  return true;
}

bool LeaseElector::Create(TimePoint start) {
  const json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                      {"kind", "Lease"},
                      {"metadata", {{"name", cfg_.name}, {"namespace", cfg_.namespace_}}},
                      {"spec", HolderSpec(json(), false)}};
  Result<json> r = client_->Call("POST", LeasePath(cfg_.namespace_), lease.dump());
  if (!r.ok()) {
    SetError(r.status().message());
    return false;
  }
  Observe(*r);
  SetLeader(true, start);
  SetError("");
  return true;
}

bool LeaseElector::TryAcquireOrRenew() {
  const TimePoint start = clock_.Now();
  // Fast path, as client-go's: a leader renews from the Lease it last wrote, one PUT; a 409
  // (someone else wrote it) falls through to a fresh read.
  if (IsLeader() && observed_.is_object() && SpecHolder(observed_) == identity_) {
    if (Update(observed_, HolderSpec(observed_["spec"], true), start)) return true;
  }
  Result<json> got = client_->Call("GET", path_);
  if (!got.ok()) {
    if (got.status().IsNotFound()) return Create(start);
    SetError(got.status().message());
    return false;
  }
  Observe(*got);
  const std::string holder = SpecHolder(*got);
  const bool mine = holder == identity_;
  if (!holder.empty() && !mine && ObservedValid(start)) {
    SetError("lease " + cfg_.namespace_ + "/" + cfg_.name + " is held by " + holder);
    return false;
  }
  const json old_spec = got->value("spec", json::object());
  return Update(*got, HolderSpec(old_spec, mine), start);
}

bool LeaseElector::Step() {
  last_step_ = clock_.Now();
  if (!TryAcquireOrRenew() && leader_.load() && !IsLeader()) SetLeader(false, {});
  const bool leader = IsLeader();
  if (telemetry_) telemetry_->Set(kLeaderGauge, {}, leader ? 1 : 0);
  next_wait_ = cfg_.retry_period;
  if (!leader) {
    // client-go's wait.JitterUntil(acquire, RetryPeriod, JitterFactor = 1.2).
    std::uniform_real_distribution<double> extra(0.0, kAcquireJitterFactor);
    next_wait_ += std::chrono::duration_cast<Duration>(cfg_.retry_period * extra(jitter_rng_));
  }
  return leader;
}

Status LeaseElector::Release() {
  if (!leader_.load() && SpecHolder(observed_) != identity_) return Status::Ok();
  SetLeader(false, {});  // stop applying before the Lease can pass to anyone else
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string now = FormatMicroTime(clock_.WallNow());
    json lease = observed_;
    lease["spec"] = {
        {"holderIdentity", ""},
        {"leaseDurationSeconds", 1},
        {"acquireTime", now},
        {"renewTime", now},
        {"leaseTransitions", SpecInt(observed_.value("spec", json()), "leaseTransitions", 0)}};
    Result<json> r = client_->Call("PUT", path_, lease.dump());
    if (r.ok()) {
      Observe(*r);
      return Status::Ok();
    }
    if (!r.status().IsConflict() || attempt > 0) {
      return r.status().Wrap("unable to release lease " + cfg_.namespace_ + "/" + cfg_.name);
    }
    // Someone wrote it since our last renewal: re-read, and release only if still ours.
    Result<json> got = client_->Call("GET", path_);
    if (!got.ok()) return got.status().Wrap("unable to release lease");
    Observe(*got);
    if (SpecHolder(*got) != identity_) return Status::Ok();
  }
  return Status::Ok();
}

Result<std::unique_ptr<LeaseElector>> MakeLeaseElector(const LeaderElectionConfig& cfg,
                                                       HttpClient& http, Clock& clock,
                                                       const KubeAuthEnv& auth_env,
                                                       Telemetry* telemetry) {
  Result<KubeEndpoint> ep = ResolveKubeEndpoint(cfg.auth, auth_env);
  if (!ep.ok()) return ep.status().Wrap("leader election");
  KubeClientOptions opts;
  opts.call_timeout = cfg.retry_period;
  opts.attempt_timeout = cfg.retry_period;
  opts.backoff_max = std::min<Duration>(opts.backoff_max, cfg.retry_period / 2);
  const std::string identity = cfg.identity.empty() ? DefaultLeaderIdentity() : cfg.identity;
  return std::make_unique<LeaseElector>(
      cfg, identity, std::make_unique<KubeClient>(*ep, http, clock, opts), clock, telemetry);
}

}  // namespace aiscale::act
