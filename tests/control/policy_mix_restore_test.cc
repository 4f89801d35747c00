// Exact restore with the real policy mix (issue 11 §4): SqliteStore logs most state changes as
// deltas and writes a state in full only now and then, so a restart must replay the log. Every
// learned state (hpa behavior history, kpa, predictive's Holt-Winters and error quantiles,
// training's fits and phase detector) read back after a restart must equal, bit for bit, what
// the controller held when it stopped, which a MemoryStore fed the same ticks keeps as given.
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "control/assembler.h"
#include "control/controller.h"
#include "core/config/config_node.h"
#include "decide/pipeline.h"
#include "decide/policy_registry.h"
#include "fakes/fake_actuator.h"
#include "sim/event_queue.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace aiscale::control {
namespace {

const char* const kWorkloads[4] = {
    R"(name: hpa
kind: InferenceService
min_replicas: 1
max_replicas: 32
behavior:
  scaleUp: {stabilizationWindowSeconds: 0, policies: [{type: Pods, value: 4, periodSeconds: 60}]}
  scaleDown: {stabilizationWindowSeconds: 300, policies: [{type: Percent, value: 50, periodSeconds: 60}]}
policy:
  name: hpa
  metrics:
    - {signal: concurrency, type: Pods, target: {type: AverageValue, value: 24}}
    - {signal: kv_cache_usage, type: Pods, target: {type: AverageValue, value: 0.8}}
)",
    R"(name: kpa
kind: InferenceService
min_replicas: 1
max_replicas: 64
policy: {name: kpa, signal: concurrency, target: 16, stable_window: 60s}
)",
    R"(name: predictive
kind: InferenceService
min_replicas: 1
max_replicas: 64
cold_start: 2m
policy: {name: predictive, signal: request_rate, capacity_per_replica: 2.0, min_errors: 10}
)",
    R"(name: training
kind: PyTorchJob
min_replicas: 2
max_replicas: 16
cold_start: 3m
policy: {name: training, rescales_per_hour: 4, rescale_burst: 2, min_dwell: 5m}
)"};

// Deterministic signals that move every tick: serving demand on a wave per workload, spread
// over the replicas the actuator reports; training throughput sub-linear in its size, with an
// eval phase every 10 minutes.
class WaveSource final : public MetricSource {
 public:
  explicit WaveSource(const testing::FakeActuator& actuator) : actuator_(actuator) {}
  std::string_view Name() const override { return "wave"; }
  FetchResult Fetch(const MetricQuery& q, TimePoint now) override {
    const double t = SinceEpochSeconds(now);
    const int i = std::stoi(q.workload.name.substr(1));
    auto it = actuator_.state.find(q.workload.Key());
    const int n = it == actuator_.state.end() ? 1 : std::max(1, it->second.current);
    std::vector<Observation> out;
    if (i % 4 == 3) {
      const bool eval = static_cast<int64_t>(t / 15) % 40 >= 38;
      double v = eval ? 0 : 500 * std::pow(n, 0.9) * (1 + 0.01 * std::sin(t + i));
      if (q.signal == "phase") v = eval ? 2 : 1;
      if (q.signal == "gpu_util") v = eval ? 40 : 85 + 3 * std::sin(t / 7 + i);
      if (q.signal == "samples_remaining") v = 1e9 - 5000 * t;
      if (q.signal == "epoch") v = std::floor(t / 1800);
      out.push_back({q.signal, "", v, now, true});
      return out;
    }
    const double demand = (30 + 7 * i) * (1 + 0.5 * std::sin(t / 600 + i)) + 3 * std::sin(t);
    for (int p = 0; p < n; ++p) {
      double v = demand / n;
      if (q.signal == "kv_cache_usage") v = std::min(0.95, 0.02 * v);
      if (q.signal == "request_rate") v /= 8;
      out.push_back({q.signal, "pod-" + std::to_string(p), v, now, true});
    }
    return out;
  }

 private:
  const testing::FakeActuator& actuator_;
};

bool SameBits(const PersistentState& a, const PersistentState& b) {
  if (a.values.size() != b.values.size()) return false;
  for (auto x = a.values.begin(), y = b.values.begin(); x != a.values.end(); ++x, ++y) {
    if (x->first != y->first || x->second.size() != y->second.size()) return false;
    if (!x->second.empty() &&
        std::memcmp(x->second.data(), y->second.data(), x->second.size() * sizeof(double)) != 0) {
      return false;
    }
  }
  return true;
}

struct World {
  sim::SimClock clock{AtSeconds(1'700'000'000)};
  testing::FakeActuator actuator;
  WaveSource source{actuator};
  std::unique_ptr<Controller> ctl;
};

constexpr int kCount = 8;  // two of each policy

void AddAll(World& w, Store* store) {
  w.ctl = std::make_unique<Controller>(w.clock, store);
  auto registry = decide::PolicyRegistry::Default();
  ASSERT_TRUE(registry.ok());
  SourceLookup lookup;
  lookup.fallback = &w.source;
  for (int i = 0; i < kCount; ++i) {
    config::ConfigErrors errors;
    const config::ConfigNode n = config::ParseConfig(kWorkloads[i % 4], "mix.yaml", errors);
    auto pipeline = decide::BuildPipeline(*registry, n, n.Child("policy"), 15,
                                          n.DurationSeconds("cold_start", 0));
    ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
    WorkloadSpec spec = decide::ReadWorkloadFields(n, 15);
    spec.ref.name = "w" + std::to_string(i);
    spec.ref.namespace_ = "mix";
    auto b = Assemble(spec, *pipeline, lookup, &w.actuator);
    ASSERT_TRUE(b.ok()) << b.status().message();
    ASSERT_TRUE(w.ctl->Add(std::move(b).value()).ok());
    ASSERT_TRUE(errors.empty());
  }
}

void RunTicks(World& w, int ticks) {
  for (int k = 0; k < ticks; ++k) {
    w.clock.Advance(Seconds(15));
    w.ctl->Collect();
    w.ctl->Tick();
  }
}

// Writes go to both; reads come from the store under test.
class TeeStore final : public Store {
 public:
  TeeStore(Store& tested, Store& reference) : tested_(tested), reference_(reference) {}
  Status Append(const Decision& d) override {
    RETURN_IF_ERROR(tested_.Append(d));
    return reference_.Append(d);
  }
  Status WriteBatch(const std::vector<StoreWrite>& writes) override {
    RETURN_IF_ERROR(tested_.WriteBatch(writes));
    return reference_.WriteBatch(writes);
  }
  Result<std::vector<Decision>> Recent(const std::string& w, size_t n) override {
    return tested_.Recent(w, n);
  }
  Result<PersistentState> LoadState(const std::string& key) override {
    return tested_.LoadState(key);
  }
  Status SaveState(const std::string& key, const PersistentState& s) override {
    RETURN_IF_ERROR(tested_.SaveState(key, s));
    return reference_.SaveState(key, s);
  }

 private:
  Store& tested_;
  Store& reference_;
};

// Every state key of the kCount workloads.
std::vector<std::string> StateKeys() {
  std::vector<std::string> keys;
  for (int i = 0; i < kCount; ++i) {
    for (const char* part : {"/policy", "/stabilizer"}) {
      keys.push_back("mix/w" + std::to_string(i) + part);
    }
  }
  return keys;
}

// Opens the file again (a new process would) and compares every state with the reference.
void ExpectRestoredExactly(const std::string& path, const store::StoreOptions& o,
                           store::MemoryStore& reference) {
  auto s = store::SqliteStore::Open(path, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  int nonempty = 0;
  for (const std::string& key : StateKeys()) {
    SCOPED_TRACE(key);
    auto want = reference.LoadState(key);
    auto got = (*s)->LoadState(key);
    ASSERT_TRUE(want.ok() && got.ok()) << got.status().message();
    EXPECT_TRUE(SameBits(*got, *want));
    nonempty += want->values.empty() ? 0 : 1;
  }
  EXPECT_GE(nonempty, kCount);  // every policy learned something
}

TEST(PolicyMixRestore, EveryStateReadsBackBitForBitAfterARestart) {
  struct Case {
    std::string name;
    int before, after;  // ticks before the restart, and after it
    int snapshot_ticks;
  };
  const std::vector<Case> cases = {
      {"restart after 3 ticks, snapshots every 4", 3, 5, 4},
      {"restart mid-log, snapshots every 4", 23, 9, 4},
      {"restart after 2 h, snapshots every 40", 480, 17, 40},
      {"snapshots every tick (no deltas)", 12, 3, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = testing::FreshTempDir("mixrestore") + "/store.db";
    store::StoreOptions o;
    o.sync_every_commit = false;
    o.state_snapshot_ticks = c.snapshot_ticks;
    store::MemoryStore reference;  // every state exactly as the controller handed it over
    World w;
    for (int phase = 0; phase < 2; ++phase) {
      SCOPED_TRACE("phase " + std::to_string(phase));
      {
        auto s = store::SqliteStore::Open(path, o);
        ASSERT_TRUE(s.ok()) << s.status().message();
        TeeStore tee(**s, reference);
        AddAll(w, &tee);  // after a restart: loads every state, folding the log in
        RunTicks(w, phase == 0 ? c.before : c.after);
        if (c.snapshot_ticks > 1) {
          EXPECT_GT((*s)->Stats().state_log_bytes, 0);
        }
        w.ctl.reset();  // the process ends here
      }
      ExpectRestoredExactly(path, o, reference);
    }
  }
}

// store.state_every_ticks: each state is written in one tick out of N. After a crash every
// restored state must be one the controller really held at one of its last N ticks (never a
// mix, never older); after a clean stop (Controller::FlushStates, as `aiscale run` does) the
// restore is exact again.
TEST(PolicyMixRestore, StatesWrittenEveryFewTicksRestoreRecentOrExactAfterAFlush) {
  constexpr int kEvery = 4;
  for (const bool flush : {false, true}) {
    SCOPED_TRACE(flush ? "clean stop" : "crash");
    const std::string path = testing::FreshTempDir("mixcadence") + "/store.db";
    store::StoreOptions o;
    o.sync_every_commit = false;
    o.state_snapshot_ticks = 8;
    o.state_every_ticks = kEvery;
    store::MemoryStore reference;
    // What the reference held after each of the last kEvery ticks, by key.
    std::deque<std::map<std::string, PersistentState>> recent;
    World w;
    {
      auto s = store::SqliteStore::Open(path, o);
      ASSERT_TRUE(s.ok()) << s.status().message();
      TeeStore tee(**s, reference);
      AddAll(w, &tee);
      for (int tick = 0; tick < 37; ++tick) {
        RunTicks(w, 1);
        std::map<std::string, PersistentState> now;
        for (const std::string& key : StateKeys()) now[key] = reference.LoadState(key).value();
        recent.push_back(std::move(now));
        if (recent.size() > kEvery) recent.pop_front();
      }
      EXPECT_GT((*s)->Stats().states_deferred, 0);
      if (flush) {
        ASSERT_TRUE(w.ctl->FlushStates().ok());
      }
      w.ctl.reset();
    }
    if (flush) {
      ExpectRestoredExactly(path, o, reference);
      continue;
    }
    auto s = store::SqliteStore::Open(path, o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    int behind = 0;  // states restored older than the last tick
    for (const auto& [key, want] : recent.back()) {
      SCOPED_TRACE(key);
      auto got = (*s)->LoadState(key);
      ASSERT_TRUE(got.ok()) << got.status().message();
      bool found = false;
      for (const auto& held : recent) found = found || SameBits(*got, held.at(key));
      EXPECT_TRUE(found) << "not a state of the last " << kEvery << " ticks";
      behind += SameBits(*got, want) ? 0 : 1;
    }
    EXPECT_GT(behind, 0);  // the cadence did defer some (else this test tests nothing)
  }
}

}  // namespace
}  // namespace aiscale::control
