// AiScalerSync driving a real Controller (SimClock, in-memory store, fake engine and source):
// objects created, changed and deleted take effect at the next tick; a status write (same spec,
// new resourceVersion) changes nothing; an invalid object or a name clash is reported on its
// own status and touches nothing else; learned state follows the UID; holds; and statuses are
// queued only when they change.
#include "cli/aiscaler_sync.h"

#include <gtest/gtest.h>

#include "fakes/fake_actuator.h"
#include "fakes/fake_metric_source.h"
#include "sim/event_queue.h"
#include "store/memory_store.h"

namespace aiscale::cli {
namespace {

using nlohmann::json;
using testing::FakeActuator;
using testing::FakeMetricSource;

// An actuator the sync may own, driving the test's shared FakeActuator.
class Forward final : public Actuator {
 public:
  explicit Forward(FakeActuator& to) : to_(to) {}
  std::string_view Name() const override { return "kubernetes"; }
  Result<ScaleState> Observe(const WorkloadRef& ref) override { return to_.Observe(ref); }
  Status Apply(const WorkloadRef& ref, int desired) override { return to_.Apply(ref, desired); }

 private:
  FakeActuator& to_;
};

json Object(const std::string& name, const std::string& uid, int max, std::string rv = "1",
            json annotations = json::object()) {
  return {{"apiVersion", "aiscale.dev/v1alpha1"},
          {"kind", "AIScaler"},
          {"metadata",
           {{"name", name},
            {"namespace", "ai"},
            {"uid", uid},
            {"resourceVersion", rv},
            {"generation", 1},
            {"annotations", annotations}}},
          {"spec",
           {{"scaleTargetRef", {{"kind", "Deployment"}, {"name", name}}},
            {"min_replicas", 1},
            {"max_replicas", max},
            {"policy",
             {{"name", "hpa"},
              {"metrics",
               {{{"signal", "concurrency"},
                 {"type", "Pods"},
                 {"target", {{"type", "AverageValue"}, {"value", 10}}}}}}}},
            {"signals", {{{"name", "concurrency"}, {"source", "prom"}}}}}}};
}

class AiScalerSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reg_ = std::make_unique<WorkloadRegistries>(WorkloadRegistries::Default().value());
    sources_.resize(1);
    sources_[0].name = "prom";
    AiScalerSyncEnv env;
    env.ctx.registries = reg_.get();
    env.ctx.sources = &sources_;
    env.make_actuator = [this](const WorkloadSpec&) -> Result<std::unique_ptr<Actuator>> {
      return std::unique_ptr<Actuator>(std::make_unique<Forward>(engine_));
    };
    env.source_by_name = [this](const std::string& n) -> MetricSource* {
      return n == "prom" ? &source_ : nullptr;
    };
    env.file_has = [](const std::string& key) { return key == "ai/from-file"; };
    env.clock = &clock_;
    env.metrics_interval = Seconds(60);
    env.log = [this](const std::string& l) { log_ += l + "\n"; };
    sync_ = std::make_unique<AiScalerSync>(std::move(env));
    source_.Set("concurrency", {25, 25});  // 50 in flight, target 10 per replica: 5 replicas
  }
  void Upsert(const json& object) {
    sync_->Apply({{object["metadata"]["namespace"].get<std::string>() + "/" +
                       object["metadata"]["name"].get<std::string>(),
                   object}},
                 ctl_);
  }
  void Delete(const std::string& key) { sync_->Apply({{key, std::nullopt}}, ctl_); }
  std::vector<Decision> Tick() {
    clock_.Advance(Seconds(15));
    ctl_.Collect();
    std::vector<Decision> d = ctl_.Tick();
    sync_->AfterTick(d);
    return d;
  }
  const act::StatusCondition* Cond(const std::string& key, const char* type) {
    const auto* o = sync_->Find(key);
    return o ? o->written.Condition(type) : nullptr;
  }

  sim::SimClock clock_{AtSeconds(1000)};
  store::MemoryStore store_;
  control::Controller ctl_{clock_, &store_, control::ControllerOptions{}};
  FakeActuator engine_;
  FakeMetricSource source_;
  std::unique_ptr<WorkloadRegistries> reg_;
  std::vector<SourceSpec> sources_;
  std::unique_ptr<AiScalerSync> sync_;
  std::string log_;
};

TEST_F(AiScalerSyncTest, CreateChangeDeleteTakeEffectAtTheNextTick) {
  engine_.Set("ai/llm", 2, 2);
  Upsert(Object("llm", "u-1", 8));
  ASSERT_EQ(ctl_.size(), 1u);
  std::vector<Decision> d = Tick();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(engine_.state["ai/llm"].current, 5) << "hpa: 25 per pod, target 10: 2 -> 5";
  EXPECT_EQ(Cond("ai/llm", "AbleToScale")->reason, "SucceededRescale");

  Upsert(Object("llm", "u-1", 3, "2"));  // max_replicas 8 -> 3
  d = Tick();
  EXPECT_EQ(engine_.state["ai/llm"].current, 3);
  EXPECT_EQ(Cond("ai/llm", "ScalingLimited")->reason, "TooManyReplicas");

  // A status write comes back as MODIFIED with a new resourceVersion only: no rebinding.
  json echoed = Object("llm", "u-1", 3, "3");
  echoed["status"] = {{"currentReplicas", 3}};
  EXPECT_EQ(sync_->Apply({{"ai/llm", echoed}}, ctl_), 0u);

  const size_t applies = engine_.applies.size();
  Delete("ai/llm");
  EXPECT_EQ(ctl_.size(), 0u);
  EXPECT_EQ(sync_->objects(), 0u);
  EXPECT_TRUE(Tick().empty());
  EXPECT_EQ(engine_.applies.size(), applies) << "a deleted AIScaler's target keeps its size";
  EXPECT_EQ(engine_.state["ai/llm"].current, 3);
  EXPECT_NE(log_.find("keeps its current size"), std::string::npos) << log_;
}

TEST_F(AiScalerSyncTest, InvalidObjectIsReportedAndTouchesNothingElse) {
  engine_.Set("ai/good", 1, 1);
  Upsert(Object("good", "u-g", 8));
  json bad = Object("bad", "u-b", 8);
  bad["spec"]["policy"]["metrics"][0]["target"]["value"] = "lots";
  Upsert(bad);
  EXPECT_EQ(ctl_.size(), 1u);
  EXPECT_EQ(sync_->Find("ai/bad")->state, AiScalerSync::State::kInvalid);
  const act::StatusCondition* active = Cond("ai/bad", "ScalingActive");
  ASSERT_NE(active, nullptr) << "written at once, no tick needed";
  EXPECT_EQ(active->status, "False");
  EXPECT_EQ(active->reason, "InvalidSpec");
  EXPECT_NE(active->message.find("spec.policy.metrics[0].target.value"), std::string::npos)
      << active->message;
  EXPECT_EQ(Tick().size(), 1u);
  EXPECT_EQ(engine_.state["ai/good"].current, 5) << "hpa: 50 in flight, 10 per pod: 1 -> 5";

  // The good one turns bad: no longer acted on; fixed again: acted on, its state kept (UID).
  json broken = Object("good", "u-g", 8, "5");
  broken["spec"]["signals"][0]["source"] = "nowhere";
  Upsert(broken);
  EXPECT_EQ(ctl_.size(), 0u);
  EXPECT_NE(Cond("ai/good", "ScalingActive")->message.find("spec.signals[0].source"),
            std::string::npos);
  Upsert(Object("good", "u-g", 8, "6"));
  EXPECT_EQ(ctl_.size(), 1u);
  EXPECT_TRUE(store_.LoadState("aiscaler/u-g/stabilizer").ok());
}

TEST_F(AiScalerSyncTest, NameClashWithTheFileIsAnErrorNotAnOverride) {
  Upsert(Object("from-file", "u-f", 8));
  EXPECT_EQ(ctl_.size(), 0u);
  EXPECT_EQ(sync_->Find("ai/from-file")->state, AiScalerSync::State::kConflict);
  EXPECT_EQ(Cond("ai/from-file", "ScalingActive")->reason, "NameConflict");
}

TEST_F(AiScalerSyncTest, LearnedStateFollowsTheUid) {
  engine_.Set("ai/llm", 2, 2);
  Upsert(Object("llm", "u-1", 8));
  Tick();
  Tick();
  EXPECT_FALSE(store_.LoadState("aiscaler/u-1/stabilizer").value().values.empty());
  Delete("ai/llm");
  Upsert(Object("llm", "u-2", 8));
  EXPECT_TRUE(store_.LoadState("aiscaler/u-2/stabilizer").value().values.empty());
  Tick();
  EXPECT_FALSE(store_.LoadState("aiscaler/u-2/stabilizer").value().values.empty());
}

TEST_F(AiScalerSyncTest, HoldsAreAppliedAndShown) {
  engine_.Set("ai/llm", 2, 2);
  Upsert(Object("llm", "u-1", 5, "1", {{"aiscale.dev/paused", "true"}}));
  std::vector<Decision> d = Tick();
  EXPECT_EQ(engine_.state["ai/llm"].current, 2);
  EXPECT_NE(d[0].constrain_reason.find("paused by annotation aiscale.dev/paused"),
            std::string::npos)
      << d[0].constrain_reason;
  EXPECT_EQ(Cond("ai/llm", "Paused")->reason, "ScalingPaused");
  ASSERT_EQ(ctl_.size(), 1u);
  EXPECT_TRUE(ctl_.binding(0).held) << "a shared pool must not move a held workload either";

  Upsert(Object("llm", "u-1", 5, "2", {{"aiscale.dev/paused-replicas", "3"}}));
  Tick();
  EXPECT_EQ(engine_.state["ai/llm"].current, 3);
  EXPECT_EQ(Cond("ai/llm", "Paused")->reason, "ReplicasPinned");

  Upsert(Object("llm", "u-1", 5, "3", {{"aiscale.dev/paused", "sometimes"}}));
  Tick();
  EXPECT_EQ(engine_.state["ai/llm"].current, 3) << "an unreadable hold holds";
  EXPECT_EQ(Cond("ai/llm", "Paused")->reason, "InvalidAnnotation");

  Upsert(Object("llm", "u-1", 5, "4"));
  Tick();
  EXPECT_EQ(engine_.state["ai/llm"].current, 5);
  EXPECT_FALSE(ctl_.binding(0).held);
  EXPECT_EQ(Cond("ai/llm", "Paused")->status, "False");
}

// A metric value that moves is written once a minute at most; a change of size, at once. (The
// ScalingActive message used to name the policy's rule, which flips between hpa_within_tolerance
// and hpa_direction_flip as the value moves by 5%: a status write each time.)
TEST_F(AiScalerSyncTest, StatusesQueuedOnlyWhenTheyChange) {
  source_.Set("concurrency", {10, 10});  // on target: the size holds
  engine_.Set("ai/a", 5, 5);
  engine_.Set("ai/b", 5, 5);
  Upsert(Object("a", "u-a", 8));
  Upsert(Object("b", "u-b", 8));
  Tick();
  EXPECT_EQ(sync_->statuses_queued(), 2u);
  Tick();  // the same decisions: nothing to write
  EXPECT_EQ(sync_->statuses_queued(), 2u);
  source_.Set("concurrency", {10.5, 10.5});  // a value moves, the size does not: waits a minute
  Tick();
  EXPECT_EQ(sync_->statuses_queued(), 2u);
  for (int i = 0; i < 4; ++i) Tick();  // 60 s later the new values are written
  EXPECT_EQ(sync_->statuses_queued(), 4u);
  engine_.Set("ai/a", 9, 9);  // a's size changed outside: a's status, at once
  Tick();
  EXPECT_EQ(sync_->statuses_queued(), 5u);
}

}  // namespace
}  // namespace aiscale::cli
