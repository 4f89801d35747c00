// Calibrate: the fits, the events-log reader and the measurements on synthetic runs whose
// truth is known, and the round trip: the scenario written back reproduces what was measured.
#include "sim/calibrate.h"

#include <gtest/gtest.h>

#include "core/signal.h"
#include "sim/scenario.h"
#include "sim/training_model.h"

namespace aiscale::sim {
namespace {

// Builds a train.py-shaped events log with known timings.
class LogBuilder {
 public:
  explicit LogBuilder(int batch = 32) : batch_(batch) {}
  LogBuilder& Start(int world) {
    world_ = world;
    Add({"start", t_, world, samples_, "", -1});
    return *this;
  }
  LogBuilder& Phase(const std::string& p, int epoch, double after_s = 0) {
    t_ += after_s;
    Add({"phase", t_, 0, samples_, p, epoch});
    return *this;
  }
  LogBuilder& Steps(int n, double step_s) {
    for (int i = 0; i < n; ++i) {
      t_ += step_s;
      samples_ += batch_ * world_;
      Add({"step", t_, world_, samples_, "", -1});
    }
    return *this;
  }
  LogBuilder& Ckpt(double after_s = 0) {
    t_ += after_s;
    Add({"ckpt", t_, 0, samples_, "", -1});
    return *this;
  }
  LogBuilder& EvalEnd(int epoch, double after_s) {
    t_ += after_s;
    Add({"eval", t_, 0, samples_, "", epoch});
    return *this;
  }
  LogBuilder& Stop(double after_s) {
    t_ += after_s;
    Add({"stop", t_, 0, samples_, "", -1});
    return *this;
  }
  LogBuilder& Wait(double s) {
    t_ += s;
    return *this;
  }
  LogBuilder& Done() {
    Add({"done", t_, 0, samples_, "", -1});
    return *this;
  }
  double now() const { return t_; }
  JobEventLog log() const { return {events_, 0}; }

 private:
  void Add(JobEvent e) { events_.push_back(std::move(e)); }
  int batch_;
  int world_ = 1;
  double t_ = 1000;
  double samples_ = 0;
  std::vector<JobEvent> events_;
};

TEST(FitNonNegative, Table) {
  struct Case {
    std::string name;
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {"one column, exact", {{1}, {2}}, {3, 6}, {3}},
      {"two columns, exact", {{1, 0}, {0.5, 0.5}}, {2, 1.5}, {2, 1}},
      // The unconstrained fit of y = 4 - 2 x has a negative slope: the best with b >= 0 is
      // the mean on the intercept column alone.
      {"negative coefficient dropped", {{1, 0}, {1, 1}, {1, 2}}, {4, 2, 0}, {2, 0}},
      {"a column of zeros stays 0", {{1, 0}, {2, 0}}, {1, 2}, {1, 0}},
      {"a tie goes to fewer columns", {{1, 1}}, {5}, {5, 0}},
      {"no rows", {}, {}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<double> got = FitNonNegative(c.x, c.y);
    ASSERT_EQ(got.size(), c.want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], c.want[i], 1e-9) << i;
  }
}

TEST(ParseJobEvents, SkipsWhatIsNotAnEvent) {
  const std::string text =
      "{\"ev\": \"start\", \"t\": 10.5, \"world\": 2, \"samples\": 64}\n"
      "\n"
      "{\"ev\": \"phase\", \"t\": 11, \"phase\": \"compute\", \"epoch\": 3}\n"
      "{\"ev\": \"step\", \"t\": 12, \"wor\n"  // cut by a kill
      "not json\n"
      "{\"t\": 13}\n"  // no ev
      "[1, 2]\n"
      "{\"ev\": \"done\", \"t\": 20, \"samples\": 128}";  // no newline at the end
  const JobEventLog log = ParseJobEvents(text);
  EXPECT_EQ(log.skipped_lines, 4);
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[0].ev, "start");
  EXPECT_EQ(log.events[0].world, 2);
  EXPECT_DOUBLE_EQ(log.events[0].samples, 64);
  EXPECT_EQ(log.events[1].phase, "compute");
  EXPECT_EQ(log.events[1].epoch, 3);
  EXPECT_DOUBLE_EQ(log.events[2].t, 20);
}

// One epoch at world 1: load 6 s, 40 steps of 0.5 s, eval 10 s.
LogBuilder StaticRun() {
  LogBuilder b;
  b.Start(1).Phase("load", 0).Phase("compute", 0, 6).Steps(20, 0.5).Ckpt().Steps(20, 0.5);
  b.Phase("eval", 0).EvalEnd(0, 10).Ckpt().Phase("eval", 1).Done();
  return b;
}

TEST(Calibrate, StaticRunMeasuresPhasesAndThroughput) {
  auto c = Calibrate(StaticRun().log(), {{1000.5, 1, false, 1}, {1030, 1, false, 1}});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->batch, 32);
  EXPECT_EQ(c->epochs, 1);
  EXPECT_DOUBLE_EQ(c->total_samples, 40 * 32);
  ASSERT_EQ(c->samples_per_s.size(), 1u);
  EXPECT_NEAR(c->samples_per_s.at(1), 64, 1e-9);
  EXPECT_NEAR(c->load_s, 6, 1e-9);
  EXPECT_NEAR(c->eval_s.at(1), 10, 1e-9);
  // One eval size cannot split serial from parallel: all of it is taken as serial.
  EXPECT_NEAR(c->eval_serial_s, 10, 1e-9);
  EXPECT_NEAR(c->sample_compute_s * 32, 0.5, 1e-9);
  EXPECT_NEAR(c->real.job_time_s, 36, 1e-9);
  EXPECT_NEAR(c->real.load_s, 6, 1e-9);
  EXPECT_NEAR(c->real.compute_s, 20, 1e-9);
  EXPECT_NEAR(c->real.eval_s, 10, 1e-9);
  EXPECT_EQ(c->real.rescales, 0);
  EXPECT_NEAR(c->real.node_hours, 36.0 / 3600, 1e-12);
}

// World 1 for 20 steps of 0.5 s; a grow decision 2 s before the last step at world 1; the job
// stops 1 s after it and restarts 9 s later at world 2 (0.6 s steps: 64 samples each), evals
// at world 2 last 7 s; a second epoch at world 2 with a hold that ended without a stop.
struct GrowRun {
  JobEventLog log;
  std::vector<TickRecord> ticks;
  double decision_t = 0;
  double t_done = 0;
};

GrowRun GrowingRun() {
  LogBuilder b;
  GrowRun r;
  b.Start(1).Phase("load", 0).Phase("compute", 0, 4).Steps(16, 0.5);
  r.decision_t = b.now();
  b.Steps(4, 0.5).Stop(1).Wait(9).Start(2).Phase("compute", 0).Steps(10, 0.6);
  b.Ckpt().Wait(20).Steps(10, 0.6);  // a checkpoint hold that timed out: not compute time
  b.Phase("eval", 0).EvalEnd(0, 7).Phase("load", 1).Phase("compute", 1, 4).Steps(20, 0.6);
  b.Phase("eval", 1).EvalEnd(1, 7).Phase("eval", 2).Done();
  r.t_done = b.now();
  r.log = b.log();
  r.ticks = {{1001, 1, false, 1}, {r.decision_t, 1, true, 2}, {r.decision_t + 5, 2, false, 2}};
  return r;
}

TEST(Calibrate, GrowMeasuresRestartAndBothSizes) {
  const GrowRun run = GrowingRun();
  auto c = Calibrate(run.log, run.ticks);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->epochs, 2);
  EXPECT_NEAR(c->samples_per_s.at(1), 64, 1e-9);
  EXPECT_NEAR(c->samples_per_s.at(2), 64 / 0.6, 1e-6);
  EXPECT_EQ(c->real.rescales, 1);
  ASSERT_EQ(c->grow_latency_s.size(), 1u);
  EXPECT_NEAR(c->grow_latency_s[0], 2 + 1 + 9 + 0.6, 1e-9);  // decision -> first step at 2
  EXPECT_TRUE(c->shrink_latency_s.empty());
  EXPECT_NEAR(c->grow_lead_s, 2, 1e-9);
  EXPECT_NEAR(c->restart_gap_s, 10, 1e-9);
  EXPECT_NEAR(c->real.restart_s, 10, 1e-9);
  EXPECT_NEAR(c->load_s, 4, 1e-9);
  EXPECT_NEAR(c->eval_s.at(2), 7, 1e-9);
  // Two sizes, exact, per 32 samples (the model's global batch): 0.5 = 32 s at 1 and
  // 0.3 = 16 s + sync / 2 at 2 -> s = 1/64, sync = 0.1 (hop: 0).
  EXPECT_NEAR(c->sample_compute_s, 0.5 / 32, 1e-9);
  EXPECT_NEAR(c->sync_s, 0.1, 1e-9);
  EXPECT_NEAR(c->hop_s, 0, 1e-12);
  for (int n : {1, 2}) EXPECT_NEAR(c->ModelSamplesPerS(n), c->samples_per_s.at(n), 1e-6) << n;
  const double t0 = 1000;
  const double want_nh = (run.decision_t - t0) * 1 + (run.t_done - run.decision_t) * 2;
  EXPECT_NEAR(c->real.node_hours * 3600, want_nh, 1e-6);
  EXPECT_NEAR(c->real.job_time_s, run.t_done - t0, 1e-9);
  EXPECT_NEAR(c->real.load_s + c->real.compute_s + c->real.eval_s + c->real.restart_s,
              c->real.job_time_s, 1e-9);
}

TEST(Calibrate, RejectsLogsWithoutARun) {
  struct Case {
    std::string name;
    JobEventLog log;
    std::string want;
  };
  LogBuilder unfinished;
  unfinished.Start(1).Phase("compute", 0).Steps(5, 0.1);
  LogBuilder no_steps;
  no_steps.Start(1).Phase("load", 0).Phase("eval", 0, 3).Done();
  LogBuilder no_start;
  no_start.Phase("compute", 0).Steps(5, 0.1).Done();
  const std::vector<Case> cases = {
      {"empty", {}, "no `start`"},
      {"unfinished", unfinished.log(), "no `done`"},
      {"no steps", no_steps.log(), "no two consecutive steps"},
      {"no start", no_start.log(), "no `start`"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = Calibrate(c.log, {});
    ASSERT_FALSE(got.ok());
    EXPECT_TRUE(got.status().IsInvalid());
    EXPECT_NE(got.status().message().find(c.want), std::string::npos) << got.status().message();
  }
}

TEST(Calibrate, UnfinishedRunWhenAllowed) {
  LogBuilder b;
  b.Start(1).Phase("load", 0).Phase("compute", 0, 5).Steps(10, 0.5).Stop(1);
  auto c = Calibrate(b.log(), {}, {.allow_unfinished = true});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->finished);
  EXPECT_DOUBLE_EQ(c->total_samples, 320);
  EXPECT_NEAR(c->real.job_time_s, 11, 1e-9);  // to the last event (the stop)
  EXPECT_NEAR(c->samples_per_s.at(1), 64, 1e-9);
  EXPECT_TRUE(Calibrate(StaticRun().log(), {}, {.allow_unfinished = true})->finished);
}

// The scenario written from a calibration parses, and its job model gives back the measured
// throughput, load and eval lengths and the restart gap.
TEST(ScenarioYaml, RoundTripsThroughTheSimulatorModel) {
  const GrowRun run = GrowingRun();
  auto c = Calibrate(run.log, run.ticks);
  ASSERT_TRUE(c.ok());
  ScenarioFrame f;
  f.workload = "elastic";
  f.min_replicas = 1;
  f.max_replicas = 3;
  f.control_period_s = 5;
  f.policy_yaml = "{name: training, reference_replicas: 2}";
  const std::string yaml = ScenarioYaml(*c, f);
  auto s = ParseScenario(yaml, "calibrated.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message() << "\n" << yaml;
  ASSERT_EQ(s->workloads.size(), 1u);
  EXPECT_EQ(s->workloads[0].initial_replicas, 1);
  EXPECT_NEAR(s->cluster.provisioning_delay_s, 2, 1e-3);
  config::ConfigErrors errors;
  const config::ConfigNode root = config::ParseConfig(yaml, "calibrated.yaml", errors);
  const TrainingJobConfig job =
      TrainingJobConfig::Parse(root.Child("spec").Child("workloads").Items().at(0).Child("job"));
  ASSERT_TRUE(errors.empty()) << errors.ToStatus().message();
  for (int n : {1, 2}) {
    SCOPED_TRACE(n);
    const PhaseRates r = RatesFor(job, signals::Phase::kCompute, n, 1, 16);
    EXPECT_NEAR(r.samples_per_s, c->samples_per_s.at(n), 1e-3 * c->samples_per_s.at(n));
  }
  const PhaseRates load = RatesFor(job, signals::Phase::kLoad, 2, 1, 16);
  EXPECT_NEAR(job.initial_load_gb / load.progress_per_s, 4, 1e-3);
  const PhaseRates eval = RatesFor(job, signals::Phase::kEval, 2, 1, 16);
  EXPECT_NEAR(job.eval_samples / eval.progress_per_s, 7, 1e-3);
  EXPECT_NEAR(job.restart_s(), 10, 1e-3);
  EXPECT_NEAR(job.total_samples(), c->total_samples, 1e-6);
  EXPECT_EQ(job.epochs, 2);
  EXPECT_EQ(job.reload_every_epochs, 1);
}

TEST(CompareWithRun, ErrorsAreRelativeToTheRealRun) {
  RealRun real;
  real.rescales = 2;
  real.job_time_s = 200;
  real.load_s = 10;
  real.node_hours = 0.1;
  report::WorkloadSummary summary;
  summary.rescales = 3;
  summary.completion_time_s = 220;
  summary.gpu_hours = 0.1;
  summary.training = report::TrainingFigures{};
  summary.training->restart_time_s = 5;
  summary.training->load_s = 10;
  struct Want {
    std::string what;
    double error;
  };
  const std::vector<Want> wants = {{"rescales", 0.5},         {"load time (s)", 0},
                                   {"compute time (s)", 0},   {"eval time (s)", 0},
                                   {"restart time (s)", 1.0}, {"job time (s)", 0.1},
                                   {"node-hours", 0}};
  const auto rows = CompareWithRun(real, summary);
  ASSERT_EQ(rows.size(), wants.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(wants[i].what);
    EXPECT_EQ(rows[i].what, wants[i].what);
    EXPECT_NEAR(rows[i].error, wants[i].error, 1e-9);
  }
}

}  // namespace
}  // namespace aiscale::sim
