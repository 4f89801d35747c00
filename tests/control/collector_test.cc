// Collector: per-signal intervals on a manual clock, one FetchBatch per source per round, a
// busy source not asked again, a hung source that starves only its own signals (down to the
// Controller's decisions), short answers, and the fetch counters. Each behaviour that does not
// need a blocked thread runs under both executors, since the daemon uses the pool and the
// simulator the inline one.
#include "control/collector.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "control/controller.h"
#include "fakes/fake_actuator.h"
#include "fakes/scripted_sources.h"
#include "sim/event_queue.h"

namespace aiscale::control {
namespace {

using aiscale::testing::CountingSource;
using aiscale::testing::FakeActuator;
using aiscale::testing::HangingSource;
using aiscale::testing::ReleaseOnExit;

const TimePoint kT0 = AtSeconds(1000);

// Waits (30 s at most) until `done` holds; the pool's fetches finish on their own threads.
bool WaitFor(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

struct ExecutorCase {
  const char* name;
  std::function<std::unique_ptr<Executor>()> make;
};

const std::vector<ExecutorCase>& Executors() {
  static const std::vector<ExecutorCase> kCases = {
      {"inline", [] { return std::make_unique<InlineExecutor>(); }},
      {"pool", [] { return std::make_unique<ThreadPoolExecutor>(3); }},
  };
  return kCases;
}

CollectSignal Sig(const std::string& name, MetricSource* src, double interval_s = 15,
                  double timeout_s = 5) {
  return {name, "", src, Seconds(interval_s), Seconds(timeout_s)};
}

WorkloadRef Ref(const std::string& name) { return {"Deployment", "ns", name}; }

// What Read hands out, as values: the assertions below are about contents, not sharing.
std::vector<FetchResult> ReadValues(const Collector& c, size_t id, TimePoint now) {
  std::vector<FetchResult> out;
  for (const Reading& r : c.Read(id, now)) out.push_back(*r);
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

TEST(Collector, EachSignalIsFetchedOnItsOwnInterval) {
  // Round times (s after kT0) and what the source is asked in that round's one batch.
  struct Round {
    double at_s;
    std::string asked;  // "" when nothing is due
    double next_due_s;
  };
  const std::vector<Round> rounds = {
      {0, "w/fast,w/slow", 5}, {2, "", 5},         {5, "w/fast", 10},
      {10, "w/fast", 15},      {14.9, "", 15},     {15, "w/fast,w/slow", 20},
      {20, "w/fast", 25},      {25, "w/fast", 30}, {30, "w/fast,w/slow", 35},
  };
  for (const auto& ex : Executors()) {
    SCOPED_TRACE(ex.name);
    CountingSource src("prom");
    auto executor = ex.make();
    Collector c(*executor, nullptr);
    const size_t id = c.Add(Ref("w"), {Sig("fast", &src, 5), Sig("slow", &src, 15)});
    sim::SimClock clock(kT0);
    size_t batches = 0;
    for (const Round& r : rounds) {
      SCOPED_TRACE("t=" + std::to_string(r.at_s));
      clock.AdvanceTo(kT0 + Seconds(r.at_s));
      c.RunDue(clock.Now());
      ASSERT_TRUE(WaitFor([&] { return c.InFlight() == 0; }));
      const auto got = src.batches();
      if (r.asked.empty()) {
        EXPECT_EQ(got.size(), batches);
      } else {
        ASSERT_EQ(got.size(), batches + 1);
        EXPECT_EQ(Join(got.back().asked), r.asked);
        EXPECT_EQ(got.back().at, clock.Now());
        batches = got.size();
      }
      EXPECT_EQ(c.NextDue(), kT0 + Seconds(r.next_due_s));
      for (const FetchResult& f : ReadValues(c, id, clock.Now())) EXPECT_TRUE(f.ok());
    }
  }
}

// A read shares the stored result instead of copying it; a later fetch replaces the slot's
// result without touching what an earlier reader holds.
TEST(Collector, ReadsShareTheFetchedResultAndANewFetchLeavesOldReadingsAlone) {
  for (const auto& ex : Executors()) {
    SCOPED_TRACE(ex.name);
    CountingSource src("p", 1);
    auto executor = ex.make();
    Collector c(*executor, nullptr);
    const size_t id = c.Add(Ref("w"), {Sig("s", &src, 15)});
    c.RunDue(kT0);
    ASSERT_TRUE(WaitFor([&] { return c.InFlight() == 0; }));
    const std::vector<Reading> first = c.Read(id, kT0);
    const std::vector<Reading> again = c.Read(id, kT0 + Seconds(1));
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(first[0].get(), again[0].get());
    src.set_value(7);
    c.RunDue(kT0 + Seconds(15));
    ASSERT_TRUE(WaitFor([&] { return c.InFlight() == 0; }));
    const std::vector<Reading> next = c.Read(id, kT0 + Seconds(15));
    ASSERT_TRUE(next.at(0)->ok());
    ASSERT_TRUE(first[0]->ok());
    EXPECT_NE(next[0].get(), first[0].get());
    EXPECT_EQ((*next[0])->at(0).value, 7);
    EXPECT_EQ((*first[0])->at(0).value, 1);
    EXPECT_EQ((*first[0])->at(0).at, kT0);
  }
}

TEST(Collector, OneBatchPerSourcePerRound) {
  for (const auto& ex : Executors()) {
    SCOPED_TRACE(ex.name);
    CountingSource a("a"), b("b");
    Telemetry t;  // declared before the executor: its tasks write to it
    auto executor = ex.make();
    Collector c(*executor, &t);
    c.Add(Ref("w1"), {Sig("x", &a), Sig("y", &a)});
    const size_t w2 = c.Add(Ref("w2"), {Sig("x", &a), Sig("z", &b)});
    c.Add(Ref("w3"), {Sig("z", &b)});
    c.RunDue(kT0);
    ASSERT_TRUE(WaitFor([&] { return c.InFlight() == 0; }));
    ASSERT_EQ(a.batches().size(), 1u);
    ASSERT_EQ(b.batches().size(), 1u);
    EXPECT_EQ(Join(a.batches()[0].asked), "w1/x,w1/y,w2/x");
    EXPECT_EQ(Join(b.batches()[0].asked), "w2/z,w3/z");
    const auto r = ReadValues(c, w2, kT0);
    ASSERT_EQ(r.size(), 2u);
    for (const FetchResult& f : r) {
      ASSERT_TRUE(f.ok());
      EXPECT_EQ(f->size(), 2u);
    }
    EXPECT_EQ(r[1]->at(0).signal, "z");
    // aiscale_fetches_total counts signals fetched, by source.
    EXPECT_EQ(t.Value("aiscale_fetches_total", {{"source", "a"}}), 3);
    EXPECT_EQ(t.Value("aiscale_fetches_total", {{"source", "b"}}), 2);
  }
}

TEST(Collector, ABusySourceIsNotAskedAgainAndItsLateSignalsReadDeadlineExceeded) {
  HangingSource hung;
  CountingSource ok("ok");
  Telemetry t;  // outlives the pool, whose released task still counts into it
  ThreadPoolExecutor pool(4);
  Collector c(pool, &t);
  ReleaseOnExit release(hung);  // destroyed first: the pool's destructor then joins at once
  const size_t h = c.Add(Ref("h"), {Sig("s", &hung, 5, 5)});
  const size_t o = c.Add(Ref("o"), {Sig("s", &ok, 5, 5)});

  c.RunDue(kT0);
  ASSERT_TRUE(hung.AwaitBlocked());
  ASSERT_TRUE(WaitFor([&] { return c.InFlight() == 1; }));  // only the hung one is left
  // Within its deadline a running fetch is "not yet": no data, and not counted as an error.
  auto early = ReadValues(c, h, kT0 + Seconds(3));
  ASSERT_FALSE(early.at(0).ok());
  EXPECT_EQ(early[0].status().code(), StatusCode::kUnavailable);
  EXPECT_NE(early[0].status().message().find("no fetch from hung for s has completed yet"),
            std::string::npos)
      << early[0].status().message();
  // The hung slot has no due time while it runs; the healthy one is due again at +5 s.
  EXPECT_EQ(c.NextDue(), kT0 + Seconds(5));

  for (double at_s : {5.0, 10.0, 15.0}) {
    SCOPED_TRACE(at_s);
    const TimePoint now = kT0 + Seconds(at_s);
    c.RunDue(now);
    ASSERT_TRUE(WaitFor([&] { return c.InFlight() == 1; }));
    EXPECT_EQ(hung.calls(), 1);  // still busy: never asked again
    EXPECT_EQ(ok.batches().size(), static_cast<size_t>(at_s / 5) + 1);
    const auto late = ReadValues(c, h, now + Seconds(1));
    ASSERT_FALSE(late.at(0).ok());
    EXPECT_EQ(late[0].status().code(), StatusCode::kDeadlineExceeded);
    const std::string want =
        "still running after " + std::to_string(static_cast<int>(at_s) + 1) + " s (deadline 5 s)";
    EXPECT_NE(late[0].status().message().find(want), std::string::npos)
        << late[0].status().message();
    const auto fresh = ReadValues(c, o, now + Seconds(1));
    ASSERT_TRUE(fresh.at(0).ok()) << fresh[0].status().message();
    EXPECT_EQ(fresh[0]->at(0).at, now);  // this round's values
  }
  // One late fetch is one error, however often it is read.
  EXPECT_EQ(
      t.Value("aiscale_fetch_errors_total", {{"source", "hung"}, {"code", "deadline_exceeded"}}),
      1);
  EXPECT_EQ(t.Value("aiscale_fetches_total", {{"source", "hung"}}), 0);
  EXPECT_EQ(t.Value("aiscale_fetches_total", {{"source", "ok"}}), 4);
}

// desired = ceil(sum / 10), trusting the sum whatever the status: only the Controller's veto
// keeps missing data from scaling down.
class TenPerReplica final : public Policy {
 public:
  std::string_view Name() const override { return "ten"; }
  Recommendation Recommend(const PolicyInput& in, PersistentState&) const override {
    const double sum = in.signals.Get("queue_len").sum;
    return {static_cast<int>(std::ceil(sum / 10)), true, "ten", "sum " + std::to_string(sum), {}};
  }
  std::vector<std::string> Signals() const override { return {"queue_len"}; }
};

WorkloadBinding Bind(const std::string& name, Actuator* a, MetricSource* src) {
  WorkloadBinding b;
  b.ref = Ref(name);
  b.policy = std::make_shared<TenPerReplica>();
  b.actuator = a;
  b.signals.push_back({"queue_len", "", src, Seconds(5), Seconds(5)});
  return b;
}

TEST(Collector, AHungSourceStarvesOnlyItsOwnWorkloadsAndTheTickDoesNotWait) {
  HangingSource hung;
  CountingSource good("good", 1);  // two instances of 1: sum 2, one replica's worth
  Telemetry t;
  ThreadPoolExecutor pool(4);
  FakeActuator act;
  sim::SimClock clock(kT0);
  ControllerOptions opt;
  opt.executor = &pool;
  opt.telemetry = &t;
  Controller ctl(clock, nullptr, opt);
  ReleaseOnExit release(hung);
  act.Set("ns/fresh", 4, 4);
  act.Set("ns/stuck1", 4, 4);
  act.Set("ns/stuck2", 4, 4);
  ASSERT_TRUE(ctl.Add(Bind("stuck1", &act, &hung)).ok());
  ASSERT_TRUE(ctl.Add(Bind("fresh", &act, &good)).ok());
  ASSERT_TRUE(ctl.Add(Bind("stuck2", &act, &hung)).ok());

  struct Round {
    double at_s;
    double good_value;         // each of the healthy workload's two instances
    int fresh_to;              // the healthy workload follows this round's values
    std::string stuck_detail;  // why the hung ones have no data
  };
  const std::vector<Round> rounds = {
      {0, 1, 1, "no fetch from hung for queue_len has completed yet"},
      {6, 15, 3, "still running after 6 s (deadline 5 s)"},
      {12, 5, 1, "still running after 12 s (deadline 5 s)"},
  };
  for (const Round& r : rounds) {
    SCOPED_TRACE(r.at_s);
    clock.AdvanceTo(kT0 + Seconds(r.at_s));
    good.set_value(r.good_value);
    ctl.Collect();
    ASSERT_TRUE(hung.AwaitBlocked());
    ASSERT_TRUE(WaitFor([&] { return ctl.collector().InFlight() == 2; }));  // the hung two
    // Tick returns while the hung batch is still blocked: it reads snapshots only.
    const std::vector<Decision> ds = ctl.Tick();
    ASSERT_EQ(ds.size(), 3u);
    EXPECT_EQ(hung.calls(), 1);
    const Decision& fresh = ds[1];
    ASSERT_EQ(fresh.inputs.size(), 1u);
    EXPECT_EQ(fresh.inputs[0].status, SignalStatus::kOk);
    EXPECT_EQ(fresh.inputs[0].sum, 2 * r.good_value);
    EXPECT_EQ(fresh.constrained, r.fresh_to);
    for (const Decision* d : {&ds[0], &ds[2]}) {
      SCOPED_TRACE(d->workload);
      ASSERT_EQ(d->inputs.size(), 1u);
      EXPECT_EQ(d->inputs[0].status, SignalStatus::kFetchFailed);
      EXPECT_NE(d->inputs[0].detail.find(r.stuck_detail), std::string::npos) << d->inputs[0].detail;
      EXPECT_EQ(d->recommendation.desired, 0);  // the naive policy would go to zero...
      EXPECT_TRUE(d->vetoed);                   // ...and the Controller refuses
      EXPECT_EQ(d->constrained, 4);
      EXPECT_EQ(d->action, Action::kNone);
      EXPECT_NE(d->stabilize_reason.find("scale-down vetoed: queue_len is fetch_failed"),
                std::string::npos)
          << d->stabilize_reason;
    }
  }
  // Only the healthy workload was ever applied: 4 -> 1 -> 3 -> 1.
  const std::vector<std::pair<std::string, int>> want = {
      {"ns/fresh", 1}, {"ns/fresh", 3}, {"ns/fresh", 1}};
  EXPECT_EQ(act.applies, want);
  EXPECT_EQ(good.batches().size(), 3u);
  // Both hung slots are late once each.
  EXPECT_EQ(
      t.Value("aiscale_fetch_errors_total", {{"source", "hung"}, {"code", "deadline_exceeded"}}),
      2);
  EXPECT_EQ(t.Value("aiscale_scale_down_vetoes_total", {{"workload", "ns/stuck1"}}), 3);
}

// The queries of a round whose due signals are the ones asked last time are the same vector
// (no copy per signal per round); a different set of due signals gets a list of its own.
TEST(Collector, TheSameDueSignalsAreAskedWithTheSameQueryListAndANewSetWithItsOwn) {
  for (const auto& ex : Executors()) {
    SCOPED_TRACE(ex.name);
    CountingSource src("prom");
    auto executor = ex.make();
    Collector c(*executor, nullptr);
    c.Add(Ref("w"), {Sig("fast", &src, 5), Sig("slow", &src, 15)});
    for (double at : {0, 5, 10, 15, 20}) {
      c.RunDue(kT0 + Seconds(at));
      ASSERT_TRUE(WaitFor([&] { return c.InFlight() == 0; }));
    }
    const auto got = src.batches();
    ASSERT_EQ(got.size(), 5u);
    EXPECT_EQ(Join(got[0].asked), "w/fast,w/slow");
    EXPECT_EQ(Join(got[1].asked), "w/fast");
    EXPECT_EQ(Join(got[3].asked), "w/fast,w/slow");
    EXPECT_EQ(Join(got[4].asked), "w/fast");
    EXPECT_EQ(got[2].list, got[1].list);  // fast alone twice: the same list
    EXPECT_NE(got[1].list, got[0].list);
    EXPECT_NE(got[3].list, got[2].list);
  }
}

TEST(Collector, ASourceThatAnswersFewerQueriesLeavesTheRestInternal) {
  for (const auto& ex : Executors()) {
    SCOPED_TRACE(ex.name);
    CountingSource src("short");
    src.set_short_by(1);
    Telemetry t;
    auto executor = ex.make();
    Collector c(*executor, &t);
    const size_t id = c.Add(Ref("w"), {Sig("a", &src), Sig("b", &src), Sig("c", &src)});
    c.RunDue(kT0);
    ASSERT_TRUE(WaitFor([&] { return c.InFlight() == 0; }));
    const auto r = ReadValues(c, id, kT0);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_TRUE(r[0].ok());
    EXPECT_TRUE(r[1].ok());
    ASSERT_FALSE(r[2].ok());
    EXPECT_EQ(r[2].status().code(), StatusCode::kInternal);
    EXPECT_NE(r[2].status().message().find("source short answered fewer queries"),
              std::string::npos)
        << r[2].status().message();
    EXPECT_EQ(t.Value("aiscale_fetch_errors_total", {{"source", "short"}, {"code", "internal"}}),
              1);
  }
}

TEST(Collector, TelemetryCountsFetchesAndErrorsByKind) {
  struct Case {
    const char* name;
    Status error;
    std::string code;  // "" when no error is expected
  };
  const std::vector<Case> cases = {
      {"ok", Status::Ok(), ""},
      {"refused", Status::Unavailable("connection refused"), "unavailable"},
      {"timeout", Status::DeadlineExceeded("timed out"), "deadline_exceeded"},
      {"malformed", Status::Invalid("bad json"), "invalid"},
  };
  for (const auto& ex : Executors()) {
    for (const auto& k : cases) {
      SCOPED_TRACE(std::string(ex.name) + " " + k.name);
      CountingSource src("p");
      src.set_error(k.error);
      Telemetry t;
      auto executor = ex.make();
      Collector c(*executor, &t);
      const size_t w1 = c.Add(Ref("w1"), {Sig("s", &src, 15)});
      c.Add(Ref("w2"), {Sig("s", &src, 15)});
      for (double at_s : {0.0, 15.0}) {
        c.RunDue(kT0 + Seconds(at_s));
        ASSERT_TRUE(WaitFor([&] { return c.InFlight() == 0; }));
      }
      EXPECT_EQ(t.Value("aiscale_fetches_total", {{"source", "p"}}), 4);
      for (const char* code : {"unavailable", "deadline_exceeded", "invalid", "internal"}) {
        EXPECT_EQ(t.Value("aiscale_fetch_errors_total", {{"source", "p"}, {"code", code}}),
                  k.code == code ? 4 : 0)
            << code;
      }
      const auto r = ReadValues(c, w1, kT0 + Seconds(15));
      EXPECT_EQ(r.at(0).ok(), k.code.empty());
      if (!k.code.empty()) {
        EXPECT_EQ(r[0].status().code(), k.error.code());
      }
      EXPECT_NE(t.RenderText().find("# TYPE aiscale_fetch_duration_seconds histogram"),
                std::string::npos);
    }
  }
}

}  // namespace
}  // namespace aiscale::control
