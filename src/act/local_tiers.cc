// LocalActuator's warm tier: the supervisor step that puts loaded replicas ranked past the
// awake count to sleep and wakes sleepers ranked within it, by HTTP calls to each replica's
// port (vLLM's POST /sleep?level=1 and POST /wake_up). Like Probe, it copies what it needs under
// mu_, calls unlocked, and writes back only to the process it called (the pid check).
#include "act/local_actuator.h"

namespace aiscale::act {
namespace {

// A failed call is tried again this much later, not every supervisor tick.
constexpr Duration kTierRetry = Seconds(2);

}  // namespace

std::string LocalActuator::CallTier(int index, bool sleep) {
  HttpRequest req;
  req.method = "POST";
  req.url = "http://127.0.0.1:" + std::to_string(cfg_.PortFor(index)) +
            (sleep ? cfg_.warm_tier.sleep_path : cfg_.warm_tier.wake_path);
  req.timeout = cfg_.warm_tier.timeout;
  const Result<HttpResponse> r = http_.Send(req);
  if (!r.ok()) return r.status().message();
  if (r->status / 100 != 2) return "HTTP " + std::to_string(r->status) + " from " + req.url;
  return "";
}

void LocalActuator::Tiers() {
  if (!cfg_.warm_tier.on) return;
  struct Job {
    int index;
    pid_t pid;
    bool sleep;
    std::string error;
  };
  std::vector<Job> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const TimePoint now = clock_.Now();
    int rank = 0;
    for (auto& [index, r] : replicas_) {
      const bool want_asleep = rank++ >= desired_;
      if (r.pid == 0 || r.asleep == want_asleep || now < r.next_tier_call) continue;
      // Only a loaded replica can sleep: one still starting is put to sleep once ready.
      if (want_asleep && !r.ready) continue;
      jobs.push_back({index, r.pid, want_asleep, ""});
    }
  }
  for (Job& j : jobs) j.error = CallTier(j.index, j.sleep);
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  for (const Job& j : jobs) {
    auto it = replicas_.find(j.index);
    if (it == replicas_.end() || it->second.pid != j.pid) continue;
    Replica& r = it->second;
    if (j.error.empty()) {
      r.asleep = j.sleep;
      continue;
    }
    r.next_tier_call = now + kTierRetry;
    r.last_error = "replica " + std::to_string(j.index) + " did not " +
                   (j.sleep ? "go to sleep: " : "wake: ") + j.error;
  }
}

}  // namespace aiscale::act
