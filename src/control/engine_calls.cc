#include "control/engine_calls.h"

#include <cstdio>

namespace aiscale::control {

// One call, shared by the tick that waits for it and the thread that makes it; guarded by
// EngineCalls::mu_.
struct EngineCalls::Pending {
  std::string key;
  std::string engine;
  bool apply = false;
  bool started = false;
  bool done = false;
  bool cancelled = false;  // not started by the deadline: it never will be
  Clock::time_point made{};
  Result<ScaleState> scale{Status::Unavailable("not observed")};
  Status status;
  std::string tier_off;
};

namespace {

std::string Secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

}  // namespace

EngineCalls::EngineCalls(EngineCallOptions options) : options_(options) {
  if (options_.threads_per_engine == 0) options_.threads_per_engine = 1;
}

EngineCalls::~EngineCalls() { pools_.clear(); }

Executor& EngineCalls::PoolOf(const std::string& engine) {
  auto& pool = pools_[engine];
  if (!pool) pool = std::make_unique<ThreadPoolExecutor>(options_.threads_per_engine);
  return *pool;
}

std::vector<std::shared_ptr<EngineCalls::Pending>> EngineCalls::Start(
    const std::vector<Call>& calls, bool apply, std::vector<std::string>& busy) {
  std::vector<std::shared_ptr<Pending>> ps(calls.size());
  busy.assign(calls.size(), {});
  const Clock::time_point now = Clock::now();
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    std::string key = c.ref.Key();
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = late_.find(key);
      if (it != late_.end() && !it->second->done) {
        const Pending& p = *it->second;
        busy[i] = "the engine (" + p.engine + ") has not yet answered the " +
                  (p.apply ? "Apply" : "Observe") + " call made " +
                  Secs(std::chrono::duration<double>(now - p.made).count()) +
                  " s ago; no other call is made for this workload until it does";
        continue;
      }
      if (it != late_.end()) late_.erase(it);
    }
    auto p = std::make_shared<Pending>();
    p->key = std::move(key);
    p->engine = std::string(c.engine->Name());
    p->apply = apply;
    p->made = now;
    PoolOf(p->engine).Run([this, p, c] {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (p->cancelled) return;
        p->started = true;
      }
      Result<ScaleState> scale{Status::Unavailable("not observed")};
      Status status;
      std::string tier_off;
      if (p->apply) {
        status = ApplyScale(*c.engine, c.ref, c.desired, c.asleep, c.current, tier_off);
      } else {
        scale = c.engine->Observe(c.ref);
      }
      std::lock_guard<std::mutex> lock(mu_);
      p->scale = std::move(scale);
      p->status = std::move(status);
      p->tier_off = std::move(tier_off);
      p->done = true;
      done_.notify_all();
    });
    ps[i] = std::move(p);
  }
  return ps;
}

void EngineCalls::Await(const std::vector<std::shared_ptr<Pending>>& ps, Clock::time_point until) {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait_until(lock, until, [&] {
    for (const auto& p : ps) {
      if (p && !p->done) return false;
    }
    return true;
  });
  for (const auto& p : ps) {
    if (!p || p->done) continue;
    if (p->started) {
      late_[p->key] = p;
    } else {
      p->cancelled = true;
    }
  }
}

// Why call `p` has no answer at the deadline; mu_ held by the caller or p settled.
std::string EngineCalls::Unanswered(const Pending& p, Duration deadline) const {
  const std::string what = p.apply ? "Apply" : "Observe";
  if (!p.started) {
    return what + " not started within " + Secs(ToSeconds(deadline)) + " s: the engine's (" +
           p.engine + ") " + std::to_string(options_.threads_per_engine) +
           " call slots were busy; it is not made late";
  }
  return "no answer from the engine (" + p.engine + ") to " + what + " within " +
         Secs(ToSeconds(deadline)) + " s; the call goes on, and the next observation shows " +
         "what it did";
}

std::vector<std::shared_ptr<EngineCalls::Pending>> EngineCalls::Run(const std::vector<Call>& calls,
                                                                    bool apply, Duration deadline,
                                                                    std::vector<Status>& why) {
  std::vector<std::string> busy;
  std::vector<std::shared_ptr<Pending>> ps = Start(calls, apply, busy);
  Await(ps, Clock::now() + deadline);
  why.assign(calls.size(), Status::Ok());
  // A call seen done here, under the lock, is never touched by its thread again.
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < calls.size(); ++i) {
    if (!ps[i]) {
      why[i] = Status::DeadlineExceeded(busy[i]);
    } else if (!ps[i]->done) {
      why[i] = Status::DeadlineExceeded(Unanswered(*ps[i], deadline));
      ps[i] = nullptr;
    }
  }
  return ps;
}

std::vector<Result<ScaleState>> EngineCalls::Observe(const std::vector<Call>& calls) {
  std::vector<Status> why;
  const auto ps = Run(calls, false, options_.observe_deadline, why);
  std::vector<Result<ScaleState>> out;
  out.reserve(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    out.push_back(ps[i] ? std::move(ps[i]->scale) : Result<ScaleState>(std::move(why[i])));
  }
  return out;
}

std::vector<Status> EngineCalls::Apply(const std::vector<Call>& calls,
                                       std::vector<std::string>* tier_off) {
  std::vector<Status> why;
  const auto ps = Run(calls, true, options_.apply_deadline, why);
  if (tier_off) tier_off->assign(calls.size(), "");
  for (size_t i = 0; i < calls.size(); ++i) {
    if (!ps[i]) continue;
    why[i] = std::move(ps[i]->status);
    if (tier_off) (*tier_off)[i] = std::move(ps[i]->tier_off);
  }
  return why;
}

Status ApplyScale(Actuator& engine, const WorkloadRef& ref, int awake, int asleep, int current,
                  std::string& tier_off) {
  if (asleep < 0) return engine.Apply(ref, awake);
  Status st = engine.ApplyTiers(ref, awake, asleep);
  // With nothing asleep, ApplyTiers is Apply: its kInvalid is the size's, not the tier's.
  if (st.code() != StatusCode::kInvalid || asleep == 0) return st;
  tier_off = st.message();
  return awake == current ? Status::Ok() : engine.Apply(ref, awake);
}

void EngineCalls::Settle(const std::string& key) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = late_.find(key);
  if (it == late_.end()) return;
  const std::shared_ptr<Pending> p = it->second;
  done_.wait(lock, [&] { return p->done; });
  late_.erase(key);
}

size_t EngineCalls::Late() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [key, p] : late_) n += !p->done;
  return n;
}

}  // namespace aiscale::control
