// A restored stabilization window means the same seconds after a restart, whatever the new
// process's steady clock reads (a rebooted node, or another node up 3 days longer): the
// daemon's SystemClock is anchored to wall time, and everything stored is in its TimePoints.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "control/assembler.h"
#include "control/controller.h"
#include "core/config/config_node.h"
#include "core/system_clock.h"
#include "decide/pipeline.h"
#include "fakes/fake_actuator.h"
#include "fakes/fake_metric_source.h"
#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace aiscale::control {
namespace {

using testing::FakeActuator;
using testing::FakeMetricSource;

// 2026-12-01T00:00:00Z: the wall time the first process starts at.
const WallTime kW0 = WallTime(Seconds(1796083200));

// A clock whose raw readings the test moves: wall and steady advance together.
struct RawClocks {
  WallTime wall;
  TimePoint steady;
  void Advance(double s) {
    wall += Seconds(s);
    steady += Seconds(s);
  }
  std::unique_ptr<SystemClock> Make() {
    return std::make_unique<SystemClock>([this] { return wall; }, [this] { return steady; });
  }
};

PolicySpec HpaOnQueue() {
  config::ConfigErrors errs;
  const auto w = config::ParseConfig(R"(
min_replicas: 1
max_replicas: 10
policy:
  name: hpa
  metrics: [{signal: queue_len, type: Pods, target: {type: AverageValue, value: 10}}]
)",
                                     "w.yaml", errs);
  auto reg = decide::PolicyRegistry::Default();
  auto p = decide::BuildPipeline(*reg, w, w.Child("policy"), 15, 0);
  EXPECT_TRUE(p.ok()) << errs.ToStatus().message();
  return *p;  // hpa: the autoscaling/v2 default behavior, a 300 s scale-down window
}

struct Daemon {
  std::unique_ptr<SystemClock> clock;
  std::unique_ptr<store::SqliteStore> store;
  std::unique_ptr<Controller> ctl;
  int Tick() {
    ctl->Collect();
    return ctl->Tick().at(0).constrained;
  }
};

Daemon Start(RawClocks& raw, const std::string& path, FakeMetricSource& src, FakeActuator& act) {
  Daemon d;
  d.clock = raw.Make();
  auto s = store::SqliteStore::Open(path);
  EXPECT_TRUE(s.ok()) << s.status().message();
  d.store = std::move(s).value();
  d.ctl = std::make_unique<Controller>(*d.clock, d.store.get());
  WorkloadSpec spec;
  spec.ref = {"Deployment", "ns", "llm"};
  auto b = Assemble(spec, HpaOnQueue(), {}, &act);
  EXPECT_FALSE(b.ok());  // no signal entry binds queue_len: the spec must say where it is
  spec.signals = {{"queue_len", "fake", "", {}, {}}};
  b = Assemble(spec, HpaOnQueue(), {[&](const std::string&) { return &src; }, nullptr}, &act);
  EXPECT_TRUE(b.ok()) << b.status().message();
  EXPECT_TRUE(d.ctl->Add(std::move(b).value()).ok());
  return d;
}

TEST(WallAnchoredRestart, WindowHoldsToTheSecondUnderANewSteadyClock) {
  struct Case {
    const char* name;
    double steady_after_restart_s;  // the new process's raw steady reading
  };
  const std::vector<Case> cases = {
      {"node rebooted: steady restarts near zero", 2},
      {"another node, up 3 days longer", 5 * 86400.0 + 3 * 86400.0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = aiscale::testing::FreshTempDir("anchor") + "/store.db";
    FakeMetricSource src;
    FakeActuator act;
    act.Set("ns/llm", 6, 6);
    RawClocks raw{kW0, TimePoint(Seconds(5 * 86400.0))};  // first node up 5 days
    {
      Daemon d = Start(raw, path, src, act);
      src.Set("queue_len", std::vector<double>(6, 10));  // 6 pods at target: wants 6
      EXPECT_EQ(d.Tick(), 6);
      raw.Advance(60);
      src.Set("queue_len", std::vector<double>(6, 1));  // wants 1: the window holds 6
      EXPECT_EQ(d.Tick(), 6);
      raw.Advance(40);
      EXPECT_EQ(d.Tick(), 6);
    }  // the daemon stops at W0 + 100 s
    raw.steady = TimePoint(Seconds(c.steady_after_restart_s));
    raw.Advance(99);  // restarted at W0 + 199 s
    Daemon d = Start(raw, path, src, act);
    EXPECT_EQ(SinceEpochSeconds(d.clock->Now()),
              SinceEpochSeconds(TimePoint(kW0.time_since_epoch())) + 199);
    EXPECT_EQ(d.Tick(), 6);  // the 6 recommended at W0 is still inside the 300 s window
    raw.Advance(100);        // W0 + 299 s
    EXPECT_EQ(d.Tick(), 6);
    raw.Advance(2);  // W0 + 301 s: the 6 has left the window
    EXPECT_EQ(d.Tick(), 1);
  }
}

}  // namespace
}  // namespace aiscale::control
