// The probe's categories as table rows (issue 11, docs/limits.md): values that are valid YAML
// but absurd — counts that would allocate past memory, work that would never end, numbers past
// their type's range — must each be an error naming file:line:column, the field and the limit,
// found by `validate` (ValidateScenario) exactly as by `simulate` (ParseScenario).
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/utf8.h"
#include "sim/fixtures.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace aiscale::sim {
namespace {

// A valid inference scenario on a rate series (no trace file).
const std::vector<std::string> kInference = {
    "apiVersion: aiscale.dev/v1alpha1",                           // 1
    "kind: Scenario",                                             // 2
    "spec:",                                                      // 3
    "  name: t",                                                  // 4
    "  duration: 1h",                                             // 5
    "  cluster: {nodes: 8, gpus_per_node: 8}",                    // 6
    "  workloads:",                                               // 7
    "    - name: svc",                                            // 8
    "      kind: InferenceService",                               // 9
    "      min_replicas: 1",                                      // 10
    "      max_replicas: 8",                                      // 11
    "      initial_replicas: 1",                                  // 12
    "      policy: {name: predictive, capacity_per_replica: 2}",  // 13
    "      service:",                                             // 14
    "        trace:",                                             // 15
    "          format: rate_series",                              // 16
    "          points: [[0, 2], [120, 0]]",                       // 17
    "        replica:",                                           // 18
    "          kind: llm",                                        // 19
    "          max_batch: 16",                                    // 20
    "        slo: {ttft_s: 2, latency_s: 20}",                    // 21
    "  compare: [predictive, static]",                            // 22
};

enum class Base { kTraining, kInference };

// A base scenario (a case replaces lines, a replacement may hold several lines).
std::string With(Base base, const std::map<int, std::string>& edits) {
  return fixtures::EditLines(base == Base::kTraining ? fixtures::kTrainingScenario : kInference,
                             edits);
}

struct Case {
  std::string name;
  Base base;
  std::map<int, std::string> edits;
  std::string want;  // substring of the error, with file:line:column where it is known
};

// Both paths a user takes see the same error: `simulate` (ParseScenario) and `validate`.
void ExpectRejected(const Case& c) {
  SCOPED_TRACE(c.name);
  const std::string text = With(c.base, c.edits);
  auto s = ParseScenario(text, "p.yaml");
  ASSERT_FALSE(s.ok()) << "simulate accepted it";
  EXPECT_NE(s.status().message().find(c.want), std::string::npos) << s.status().message();
  EXPECT_TRUE(IsValidUtf8(s.status().message()));

  config::ConfigErrors errs;
  const config::ConfigNode root = config::ParseConfig(text, "p.yaml", errs);
  EXPECT_FALSE(ValidateScenario(root).ok()) << "validate said ok";
  EXPECT_NE(errs.ToStatus().message().find(c.want), std::string::npos) << errs.ToStatus().message();
}

TEST(ScenarioLimits, TheBasesAreValid) {
  for (Base b : {Base::kTraining, Base::kInference}) {
    auto s = ParseScenario(With(b, {}), "p.yaml");
    EXPECT_TRUE(s.ok()) << s.status().message();
  }
}

TEST(ScenarioLimits, AbortsOnValidYaml) {
  const std::vector<Case> cases = {
      {"1e9 nodes",
       Base::kTraining,
       {{8, "    nodes: 1e9"}},
       "p.yaml:8:12: spec.cluster.nodes: must be <= 100000, got 1e+09"},
      {"nodes past an int",
       Base::kTraining,
       {{8, "    nodes: 1e10"}},
       "p.yaml:8:12: spec.cluster.nodes: must be an integer within +/-2e9"},
      {"1e5 GPUs per node",
       Base::kTraining,
       {{9, "    gpus_per_node: 100000"}},
       "spec.cluster.gpus_per_node: must be <= 64"},
      {"nodes x GPUs of 6.4e6",
       Base::kTraining,
       {{8, "    nodes: 100000"}, {9, "    gpus_per_node: 64"}},
       "spec.cluster.gpus_per_node: nodes x gpus_per_node = 6400000 GPUs; at most 1000000"},
      {"failure rate 1e6 per node-hour",
       Base::kTraining,
       {{10, "    provisioning_delay: 1m\n  failures: [{rate_per_node_hour: 1e6}]"}},
       "spec.failures[0].rate_per_node_hour: must be <= 3600"},
      {"failures expected past the budget",
       Base::kTraining,
       {{10, "    provisioning_delay: 1m\n  failures: [{rate_per_node_hour: 3000}]"}},
       "spec.failures: failures expected over the run"},
      {"invalid UTF-8 scenario name",
       Base::kTraining,
       {{4, "  name: \"t\xff\""}},
       "p.yaml:4:9: spec.name: must be valid UTF-8 text"},
      {"invalid UTF-8 workload name",
       Base::kTraining,
       {{12, "    - name: \"j\xc0\xaf\""}},
       "spec.workloads[0].name: must be valid UTF-8 text"},
      {"invalid UTF-8 compare label",
       Base::kTraining,
       {{22, "  compare: [{name: static, label: \"s\xfe\"}]"}},
       "spec.compare[0].label: must be valid UTF-8 text"},
      {"invalid UTF-8 compare name",
       Base::kTraining,
       {{22, "  compare: [\"st\xff\"]"}},
       "spec.compare[0]: a compare entry must be valid UTF-8 text"},
      {"max_replicas 1e9",
       Base::kTraining,
       {{15, "      max_replicas: 1e9"}},
       "spec.workloads[0].max_replicas: must be <= 1e+06"},
      {"static replicas 1e9",
       Base::kTraining,
       {{18, "      policy: {name: static, replicas: 1000000000}"}},
       "must be <= 1e+06"},
      {"gpus per replica 1e9",
       Base::kInference,
       {{20, "          max_batch: 16\n          gpus: 1e9"}},
       "replica.gpus: must be <= 4096"},
  };
  for (const auto& c : cases) ExpectRejected(c);
}

TEST(ScenarioLimits, UnboundedWork) {
  const std::vector<Case> cases = {
      {"control period rounds to 0 ns",
       Base::kTraining,
       {{6, "  duration: 10h\n  control_period: 1e-10"}},
       "spec.control_period: must be 0 or at least 1 microsecond"},
      {"report interval rounds to 0 ns",
       Base::kTraining,
       {{6, "  duration: 10h\n  report_interval: 0.0000000001s"}},
       "at least 1 microsecond"},
      {"report interval 1 ms over 12 h",
       Base::kTraining,
       {{6, "  duration: 12h\n  report_interval: 1ms"}},
       "spec.report_interval: duration / report_interval = 43200000 timeline points per run; at "
       "most 200000"},
      {"control period 1 ms over 10 h",
       Base::kTraining,
       {{6, "  duration: 10h\n  control_period: 1ms"}},
       "control ticks per run; at most"},
      {"scrape interval 1 us over 10 h",
       Base::kTraining,
       {{6, "  duration: 10h\n  scrape_interval: 0.000001"}},
       "scrapes per run; at most"},
      {"a long duration at the default periods",
       Base::kTraining,
       {{6, "  duration: 36500d"}},
       "spec.duration: duration / report_interval"},
      {"report interval past the duration",
       Base::kTraining,
       {{6, "  duration: 10h\n  report_interval: 11h"}},
       "spec.report_interval: report_interval (39600.000000 s) must be <= duration"},
      {"total_steps 1e308",
       Base::kTraining,
       {{20, "        total_steps: 1e308"}},
       "p.yaml:20:22: spec.workloads[0].job.total_steps: must be <= 1e+12"},
      {"total_samples 1e308",
       Base::kTraining,
       {{20, "        total_samples: 1e308"}},
       "job.total_samples: must be <= "},
      {"sample_compute_s 1e300",
       Base::kTraining,
       {{21, "        epochs: 2\n        compute: {sample_compute_s: 1e300}"}},
       "job.compute.sample_compute_s: must be <= 3600"},
      {"global_batch 2e9",
       Base::kTraining,
       {{21, "        epochs: 2\n        global_batch: 2e9"}},
       "job.global_batch: must be <= 1e+07"},
      {"eval.samples 1e308",
       Base::kTraining,
       {{21, "        epochs: 2\n        eval: {every_epochs: 1, samples: 1e308}"}},
       "job.eval.samples: must be <= 1e+12"},
      {"2e9 epochs",
       Base::kTraining,
       {{21, "        epochs: 2000000000"}},
       "job.epochs: must be <= 100000"},
      {"bandwidth of 1e-300",
       Base::kTraining,
       {{21, "        epochs: 2\n        load: {initial_gb: 10, storage_gb_per_s: 1e-300}"}},
       "job.load.storage_gb_per_s: must be >= 1e-06"},
      {"a rate series asking for 1e9 requests",
       Base::kInference,
       {{17, "          points: [[0, 1000000], [1000, 0]]"}},
       "p.yaml:17:19: spec.workloads[0].service.trace.points: rate series: expects "
       "1000000000.000000 "
       "requests (rate x time summed over the points); at most 500000"},
      {"rate series over a long span",
       Base::kInference,
       {{17, "          points: [[0, 1], [1e10, 0]]"}},
       "spans more than 1e9 s"},
      {"1e12 per second for 10 ms",
       Base::kInference,
       {{17, "          points: [[0, 1e12], [0.01, 0]]"}},
       "at most 500000"},
      {"100,000 requests at one instant",
       Base::kInference,
       {{17, "          points: [[0, 1e11], [0.000001, 0]]"}},
       "trace.points: more than 20000 requests arrive within the second at t = 0 s"},
      {"input tokens 2e9",
       Base::kInference,
       {{17, "          points: [[0, 2], [120, 0]]\n          input_tokens: 2000000000"}},
       "trace.input_tokens: must be <= 1e+07"},
  };
  for (const auto& c : cases) ExpectRejected(c);
}

TEST(ScenarioLimits, NumbersPastTheirTypesRange) {
  const std::vector<Case> cases = {
      {"1e10 s duration",
       Base::kTraining,
       {{6, "  duration: 1e10"}},
       "p.yaml:6:13: spec.duration: must be at most 3.1536e+09 s (100 years)"},
      {"failure at 1e10 s",
       Base::kTraining,
       {{10, "    provisioning_delay: 1m\n  failures: [{at: 1e10s}]"}},
       "spec.failures[0].at: must be at most 3.1536e+09 s"},
      {"checkpoint of 1e10 s",
       Base::kTraining,
       {{21, "        epochs: 2\n        restart: {checkpoint: 1e10}"}},
       "job.restart.checkpoint: must be at most 3.1536e+09 s"},
      {"provisioning delay 1e10 s",
       Base::kTraining,
       {{10, "    provisioning_delay: 1e10"}},
       "spec.cluster.provisioning_delay: must be at most"},
      {"service time of 1e10 s",
       Base::kInference,
       {{19, "          kind: plain\n          service_time: {mean_s: 1e10}"}, {20, ""}},
       "replica.service_time.mean_s: must be <= 86400"},
      {"per-token time 1e10 s",
       Base::kInference,
       {{20, "          max_batch: 16\n          prefill_s_per_token: 1e10"}},
       "replica.prefill_s_per_token: must be <= 3600"},
      {"KPA stable window 3e9 s",
       Base::kInference,
       {{13, "      policy: {name: kpa, stable_window: 3e9}"}, {22, "  compare: [kpa]"}},
       "policy.stable_window: must be <= 3600"},
      {"initial replicas past an int",
       Base::kTraining,
       {{17, "      initial_replicas: 3e9"}},
       "initial_replicas: must be an integer within +/-2e9"},
      {"trace window 1e10 s",
       Base::kInference,
       {{17, "          points: [[0, 2], [120, 0]]\n          start_s: 1e10"}},
       "trace.start_s: must be"},
      {"price 1e300",
       Base::kTraining,
       {{10, "    provisioning_delay: 1m\n    price_per_gpu_hour: 1e300"}},
       "spec.cluster.price_per_gpu_hour: must be <= 1e+06"},
      {"seed past 2^53", Base::kTraining, {{5, "  seed: 1e300"}}, "spec.seed: must be <="},
  };
  for (const auto& c : cases) ExpectRejected(c);
}

TEST(ScenarioLimits, InitialReplicasSumCannotOverflowPastTheClusterCheck) {
  // Many workloads each starting at the largest allowed size: the sum is taken in int64, so it
  // is compared with the cluster honestly instead of wrapping below it.
  std::string text = With(Base::kTraining, {{15, "      max_replicas: 1000000"},
                                            {17, "      initial_replicas: 1000000"}});
  std::string extra;
  for (int i = 0; i < 3000; ++i) {
    extra += "    - {name: w" + std::to_string(i) +
             ", kind: TrainingJob, max_replicas: 1000000, initial_replicas: 1000000, policy: "
             "{name: static}, job: {total_steps: 10, epochs: 1}}\n";
  }
  text.replace(text.find("  compare:"), 0, extra);
  auto s = ParseScenario(text, "p.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("the cluster has 4 nodes but the workloads start on "
                                      "3001000000"),
            std::string::npos)
      << s.status().message().substr(0, 400);
}

TEST(ScenarioLimits, ARunPastItsEventBudgetEndsWithAClearError) {
  // A job that outlasts the run: 10 h of ticks, far more than 50 events.
  auto s = ParseScenario(With(Base::kTraining, {{20, "        total_steps: 1e9"}}), "p.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  RunOptions opt;
  opt.event_limit = 50;
  auto r = RunScenario(*s, opt);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("run budget exceeded: more than 50 simulator events"),
            std::string::npos)
      << r.status().message();
  opt.event_limit = kMaxEventsPerRun;  // the default budget fits a real run
  EXPECT_TRUE(RunScenario(*s, opt).ok());
}

TEST(ScenarioLimits, AJobWithMorePhasesThanTheOraclePlansRunsWithoutOne) {
  // 150 epochs with an eval after each: 300 phases, past kMaxOraclePhases. The run completes and
  // its summary says why there is no oracle (the exact search took minutes before).
  auto s = ParseScenario(
      With(Base::kTraining,
           {{21, "        epochs: 150\n        eval: {every_epochs: 1, samples: 100}"}}),
      "p.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto r = RunScenario(*s, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& summary = r->runs[0].workloads[0].summary;
  EXPECT_FALSE(summary.oracle.has_value());
  EXPECT_NE(summary.oracle_error.find("the oracle plans at most 100"), std::string::npos)
      << summary.oracle_error;
}

TEST(ScenarioLimits, AFailurePastTheRunsEndNeverFires) {
  auto s = ParseScenario(
      With(Base::kTraining, {{10, "    provisioning_delay: 1m\n  failures: [{at: 20h}]"}}),
      "p.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto r = RunScenario(*s, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->runs[0].workloads[0].summary.training.has_value());
  EXPECT_EQ(r->runs[0].workloads[0].summary.training->failures, 0);
}

}  // namespace
}  // namespace aiscale::sim
