// A store that keeps only changes and heartbeats must still restore a restarted controller
// exactly: after many unchanged ticks (few decisions in the file) a restart in the middle of a
// stabilization window decides tick for tick what an uninterrupted run decides.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "control/assembler.h"
#include "control/controller.h"
#include "core/config/config_node.h"
#include "core/system_clock.h"
#include "decide/pipeline.h"
#include "fakes/fake_actuator.h"
#include "fakes/fake_metric_source.h"
#include "store/sqlite_store.h"
#include "store/store_test_util.h"

namespace aiscale::store {
namespace {

using aiscale::testing::FakeActuator;
using aiscale::testing::FakeMetricSource;

// Wall and steady readings the test moves together (the daemon's SystemClock reads them).
struct RawClocks {
  WallTime wall = WallTime(Seconds(1796083200));
  TimePoint steady = TimePoint(Seconds(1000));
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
  return *p;  // the autoscaling/v2 default behavior: a 300 s scale-down window
}

struct Daemon {
  std::unique_ptr<SystemClock> clock;
  std::unique_ptr<SqliteStore> store;
  std::unique_ptr<control::Controller> ctl;
};

Daemon Start(RawClocks& raw, const std::string& path, FakeMetricSource& src, FakeActuator& act) {
  Daemon d;
  d.clock =
      std::make_unique<SystemClock>([&raw] { return raw.wall; }, [&raw] { return raw.steady; });
  StoreOptions o;
  o.sync_every_commit = false;
  o.heartbeat = Seconds(300);
  auto s = SqliteStore::Open(path, o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  d.store = std::move(s).value();
  d.ctl = std::make_unique<control::Controller>(*d.clock, d.store.get());
  WorkloadSpec spec;
  spec.ref = {"Deployment", "ns", "llm"};
  spec.signals = {{"queue_len", "fake", "", {}, {}}};
  auto b = control::Assemble(spec, HpaOnQueue(),
                             {[&](const std::string&) { return &src; }, nullptr}, &act);
  EXPECT_TRUE(b.ok()) << b.status().message();
  EXPECT_TRUE(d.ctl->Add(std::move(b).value()).ok());
  return d;
}

// Queue per pod at tick k: at target for 100 ticks (25 minutes unchanged), then low.
double QueueAt(int k) { return k < 100 ? 10 : 1; }

// Runs ticks [0, end) and returns each tick's constrained size; restarts before `restart_at`
// (never when negative), with the process down for 30 s of wall time.
std::vector<int> RunTicks(const std::string& path, int end, int restart_at, size_t* stored) {
  FakeMetricSource src;
  FakeActuator act;
  act.Set("ns/llm", 6, 6);
  RawClocks raw;
  std::vector<int> out;
  auto d = std::make_unique<Daemon>(Start(raw, path, src, act));
  for (int k = 0; k < end; ++k) {
    if (k == restart_at) {
      d.reset();
      raw.wall += Seconds(30);
      raw.steady = TimePoint(Seconds(5));  // a rebooted node
      d = std::make_unique<Daemon>(Start(raw, path, src, act));
    }
    src.Set("queue_len", std::vector<double>(6, QueueAt(k)));
    d->ctl->Collect();
    out.push_back(d->ctl->Tick().at(0).constrained);
    raw.wall += Seconds(15);
    raw.steady += Seconds(15);
  }
  auto recent = d->store->Recent("ns/llm", 1000);
  EXPECT_TRUE(recent.ok());
  if (stored) *stored = recent.ok() ? recent->size() : 0;
  return out;
}

TEST(RestartAfterUnchangedTicks, RestoresTheWindowExactly) {
  size_t stored = 0;
  // Uninterrupted, with the same 30 s gap in its clock (so only the restart differs).
  const std::vector<int> want = [&] {
    FakeMetricSource src;
    FakeActuator act;
    act.Set("ns/llm", 6, 6);
    RawClocks raw;
    const std::string path = aiscale::testing::FreshTempDir("restart") + "/store.db";
    Daemon d = Start(raw, path, src, act);
    std::vector<int> out;
    for (int k = 0; k < 140; ++k) {
      if (k == 110) {
        raw.wall += Seconds(30);
        raw.steady += Seconds(30);
      }
      src.Set("queue_len", std::vector<double>(6, QueueAt(k)));
      d.ctl->Collect();
      out.push_back(d.ctl->Tick().at(0).constrained);
      raw.wall += Seconds(15);
      raw.steady += Seconds(15);
    }
    auto recent = d.store->Recent("ns/llm", 1000);
    EXPECT_TRUE(recent.ok());
    stored = recent->size();
    return out;
  }();
  // The window holds 6 for 300 s after the load drops at tick 100, then it goes to 1.
  EXPECT_EQ(want[100], 6);
  EXPECT_EQ(want.back(), 1);
  // 140 ticks, but only the first, the heartbeats and the changes are in the file.
  EXPECT_LT(stored, 20u);
  const std::string path = aiscale::testing::FreshTempDir("restart") + "/store.db";
  size_t restarted_stored = 0;
  const std::vector<int> got = RunTicks(path, 140, 110, &restarted_stored);
  EXPECT_EQ(got, want);
  EXPECT_LT(restarted_stored, 25u);
}

}  // namespace
}  // namespace aiscale::store
