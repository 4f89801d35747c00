#include "act/kubernetes_status_writer.h"

#include <algorithm>
#include <cstdio>

namespace aiscale::act {
namespace {

using nlohmann::json;

std::pair<std::string, std::string> Split(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::string Version(const json& object) {
  const json* m = object.contains("metadata") ? &object["metadata"] : nullptr;
  if (!m || !m->is_object() || !m->contains("resourceVersion")) return "";
  const json& rv = (*m)["resourceVersion"];
  return rv.is_string() ? rv.get<std::string>() : "";
}

}  // namespace

StatusWriter::StatusWriter(KubeClient& client, Clock& clock, StatusWriterOptions options,
                           std::function<bool()> may_write,
                           std::function<void(const std::string&)> log, Telemetry* telemetry)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      may_write_(std::move(may_write)),
      log_(std::move(log)),
      telemetry_(telemetry),
      tokens_(std::max(1.0, options_.qps)) {
  if (telemetry_) {
    telemetry_->DeclareCounter("aiscale_aiscaler_status_writes_total",
                               "AIScaler status writes, by outcome (written, conflict, "
                               "failed, gone).");
  }
}

std::string StatusWriter::ObjectPath(const std::string& key) const {
  const auto [ns, name] = Split(key);
  return options_.api_prefix + "/namespaces/" + ns + "/" + options_.plural + "/" + name;
}

void StatusWriter::Queue(const std::string& key, json status) {
  std::lock_guard<std::mutex> lock(mu_);
  Pending& p = pending_[key];
  p.status = std::move(status);
}

void StatusWriter::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(key);
  versions_.erase(key);
}

void StatusWriter::SetVersion(const std::string& key, const std::string& resource_version) {
  std::lock_guard<std::mutex> lock(mu_);
  versions_[key] = resource_version;
}

void StatusWriter::QueueEvent(const std::string& key, const std::string& uid,
                              const std::string& type, const std::string& reason,
                              const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back({key, uid, type, reason, message});
}

size_t StatusWriter::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size() + events_.size();
}

void StatusWriter::Count(const char* outcome) {
  if (telemetry_) telemetry_->Add("aiscale_aiscaler_status_writes_total", {{"outcome", outcome}});
}

bool StatusWriter::Token() {
  for (;;) {
    const TimePoint now = clock_.Now();
    if (refilled_ == TimePoint{}) refilled_ = now;
    const double burst = std::max(1.0, options_.qps);
    tokens_ = std::min(burst, tokens_ + ToSeconds(now - refilled_) * options_.qps);
    refilled_ = now;
    if (tokens_ >= 1) {
      tokens_ -= 1;
      return true;
    }
    if (stop_) return false;
    clock_.SleepUntil(now + Seconds((1 - tokens_) / options_.qps));
  }
}

Result<json> StatusWriter::Put(const std::string& key, const json& status, const std::string& rv) {
  const auto [ns, name] = Split(key);
  json body = {{"apiVersion", options_.api_version},
               {"kind", options_.kind},
               {"metadata", {{"name", name}, {"namespace", ns}}},
               {"status", status}};
  if (!rv.empty()) body["metadata"]["resourceVersion"] = rv;
  return client_.Call("PUT", ObjectPath(key) + "/status", body.dump(), "application/json");
}

StatusWriter::Outcome StatusWriter::Write(const std::string& key, const json& status) {
  std::string rv;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = versions_.find(key);
    if (it != versions_.end()) rv = it->second;
  }
  Result<json> r = Put(key, status, rv);
  if (!r.ok() && r.status().IsConflict()) {
    // Someone else wrote the object since we saw it: read it once, write on its version.
    Count("conflict");
    Result<json> fresh = client_.Call("GET", ObjectPath(key));
    if (fresh.ok()) r = Put(key, status, Version(*fresh));
  }
  if (r.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string written = Version(*r);
    if (!written.empty()) versions_[key] = written;
    Count("written");
    return Outcome::kWritten;
  }
  if (r.status().IsNotFound()) {
    Count("gone");
    return Outcome::kDrop;
  }
  Count("failed");
  if (log_) log_("unable to write the status of AIScaler " + key + ": " + r.status().message());
  return Outcome::kRetry;
}

void StatusWriter::Post(const Event& e) {
  const auto [ns, name] = Split(e.key);
  const WallTime now = clock_.WallNow();
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx",
                static_cast<unsigned long long>(now.time_since_epoch().count()));
  const std::string stamp = FormatWallTime(now);
  json involved = {{"apiVersion", options_.api_version},
                   {"kind", options_.kind},
                   {"name", name},
                   {"namespace", ns}};
  if (!e.uid.empty()) involved["uid"] = e.uid;
  const json event = {{"apiVersion", "v1"},
                      {"kind", "Event"},
                      {"metadata", {{"name", name + "." + hex}, {"namespace", ns}}},
                      {"involvedObject", involved},
                      {"reason", e.reason},
                      {"message", e.message.substr(0, 1024)},
                      {"type", e.type},
                      {"source", {{"component", "aiscale"}}},
                      {"reportingComponent", "aiscale"},
                      {"firstTimestamp", stamp},
                      {"lastTimestamp", stamp},
                      {"count", 1}};
  Result<json> r = client_.Call("POST", "/api/v1/namespaces/" + ns + "/events", event.dump(),
                                "application/json");
  if (!r.ok() && log_) {
    log_("unable to post event " + e.reason + " on AIScaler " + e.key + ": " +
         r.status().message());
  }
}

int StatusWriter::WriteQueued() {
  if (may_write_ && !may_write_()) return 0;
  std::map<std::string, Pending> work;
  std::vector<Event> events;
  const TimePoint now = clock_.Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second.not_before > now) {
        ++it;
        continue;
      }
      work.insert(pending_.extract(it++));
    }
    events.swap(events_);
  }
  int written = 0;
  for (const Event& e : events) {
    if (!Token()) return written;
    Post(e);
  }
  for (auto& [key, p] : work) {
    if (!Token()) break;
    const Outcome o = Write(key, p.status);
    if (o == Outcome::kWritten) ++written;
    if (o != Outcome::kRetry) continue;
    std::lock_guard<std::mutex> lock(mu_);
    // Kept for a later round unless a newer status arrived meanwhile.
    if (!pending_.count(key)) {
      p.not_before = clock_.Now() + options_.retry_after;
      pending_.emplace(key, std::move(p));
    }
  }
  return written;
}

void StatusWriter::Run() {
  while (!stop_) {
    WriteQueued();
    const TimePoint until = clock_.Now() + Seconds(0.05);
    clock_.SleepUntil(until);
  }
}

}  // namespace aiscale::act
