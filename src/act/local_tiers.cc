// LocalActuator's warm tier: the supervisor step that puts loaded replicas ranked past the
// awake count to sleep and wakes sleepers ranked within it, by HTTP calls to each replica's
// port (vLLM's POST /sleep?level=1 and POST /wake_up). Each call runs on its own thread, so a
// wake that takes a minute holds up neither other wakes nor the supervisor's reaping and
// starting; an answer is written back only to the process it called (the pid check).
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
  CollectTierCalls(/*all=*/false);
  if (!cfg_.warm_tier.on) return;
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  int rank = 0;
  for (auto& [index, r] : replicas_) {
    const bool want_asleep = rank++ >= desired_;
    if (r.pid == 0 || r.tier_call || r.asleep == want_asleep || now < r.next_tier_call) continue;
    // Only a loaded replica can sleep: one still starting is put to sleep once ready.
    if (want_asleep && !r.ready) continue;
    LaunchTierCallLocked(index, r.pid, want_asleep);
  }
}

void LocalActuator::LaunchTierCallLocked(int index, pid_t pid, bool sleep) {
  replicas_[index].tier_call = true;
  TierCall& c = tier_calls_.emplace_back();
  c.index = index;
  c.pid = pid;
  c.sleep = sleep;
  c.thread = std::thread([this, &c] {
    std::string error = CallTier(c.index, c.sleep);
    {
      std::lock_guard<std::mutex> lock(mu_);
      c.error = std::move(error);
      c.done = true;
      wake_pending_ = true;  // record the answer now, not a tick later
    }
    wake_.notify_all();
  });
}

// A call whose replica was stopped or restarted meanwhile changes nothing (the pid check): the
// new process starts awake and gets its own call.
void LocalActuator::CollectTierCalls(bool all) {
  const std::list<TierCall> finished = JoinFinished(tier_calls_, all);
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  for (const TierCall& c : finished) {
    auto it = replicas_.find(c.index);
    if (it == replicas_.end() || it->second.pid != c.pid) continue;
    Replica& r = it->second;
    r.tier_call = false;
    if (c.error.empty()) {
      r.asleep = c.sleep;
      continue;
    }
    r.next_tier_call = now + kTierRetry;
    r.last_error = "replica " + std::to_string(c.index) + " did not " +
                   (c.sleep ? "go to sleep: " : "wake: ") + c.error;
  }
}

}  // namespace aiscale::act
