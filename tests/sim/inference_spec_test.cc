// The `service` block of an InferenceService scenario (inference_spec.h, replica_model.h,
// trace_spec.h) and its policy, through ParseScenario as `aiscale validate` reads it: every
// value that makes no sense, and every malformed trace file it points at, is one error that
// names the file, line and column of the value and its field path.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace aiscale::sim {
namespace {

// A valid inference scenario; each bad case replaces some of its lines (1-based).
const std::vector<std::string> kBase = {
    "apiVersion: aiscale.dev/v1alpha1",      // 1
    "kind: Scenario",                        // 2
    "spec:",                                 // 3
    "  name: t",                             // 4
    "  seed: 1",                             // 5
    "  duration: 1h",                        // 6
    "  cluster:",                            // 7
    "    nodes: 8",                          // 8
    "    gpus_per_node: 8",                  // 9
    "  workloads:",                          // 10
    "    - name: svc",                       // 11
    "      kind: InferenceService",          // 12
    "      min_replicas: 1",                 // 13
    "      max_replicas: 8",                 // 14
    "      initial_replicas: 1",             // 15
    "      policy:",                         // 16
    "        name: predictive",              // 17
    "        signal: request_rate",          // 18
    "        capacity_per_replica: 2.0",     // 19
    "      service:",                        // 20
    "        trace:",                        // 21
    "          format: rate_series",         // 22
    "          points: [[0, 2], [120, 0]]",  // 23
    "          rate_multiplier: 1",          // 24
    "          time_compression: 1",         // 25
    "        replica:",                      // 26
    "          kind: llm",                   // 27
    "          gpus: 1",                     // 28
    "          max_batch: 16",               // 29
    "          kv_capacity_tokens: 100000",  // 30
    "        cold_start:",                   // 31
    "          provisioning_s: 30",          // 32
    "          model_load_s: 60",            // 33
    "        price_per_gpu_hour: 2.5",       // 34
    "        slo:",                          // 35
    "          ttft_s: 2",                   // 36
    "          latency_s: 20",               // 37
    "          attainment: 0.99",            // 38
    "        queue:",                        // 39
    "          timeout_s: 60",               // 40
    "        oracle: {interval_s: 60}",      // 41
    "  compare: [predictive, static]",       // 42
};

std::string With(const std::map<int, std::string>& edits) {
  std::ostringstream os;
  for (size_t i = 0; i < kBase.size(); ++i) {
    const auto it = edits.find(static_cast<int>(i) + 1);
    os << (it != edits.end() ? it->second : kBase[i]) << "\n";
  }
  return os.str();
}

// Every line of an error text starts with the file name and a position.
void ExpectEveryLinePlaced(const std::string& message, const std::string& file) {
  std::istringstream lines(message);
  for (std::string l; std::getline(lines, l);) EXPECT_EQ(l.rfind(file + ":", 0), 0u) << l;
}

TEST(InferenceSpec, TheBaseIsValid) {
  auto s = ParseScenario(With({}), "s.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->workloads.size(), 1u);
  EXPECT_EQ(s->workloads[0].kind, "InferenceService");
}

TEST(InferenceSpec, EveryBadValueNamesFileLineColumnAndPath) {
  struct Case {
    std::string name;
    std::map<int, std::string> edits;
    std::string want;  // substring of the error message: "s.yaml:LINE:COL: PATH: message"
  };
  const std::string svc = "spec.workloads[0].service.";
  const std::vector<Case> cases = {
      // Replica capacity.
      {"zero batch",
       {{29, "          max_batch: 0"}},
       "s.yaml:29:22: " + svc + "replica.max_batch: must be >= 1, got 0"},
      {"zero kv cache",
       {{30, "          kv_capacity_tokens: 0"}},
       "s.yaml:30:31: " + svc + "replica.kv_capacity_tokens: must be >= 1, got 0"},
      {"zero gpus",
       {{28, "          gpus: 0"}},
       "s.yaml:28:17: " + svc + "replica.gpus: must be >= 1, got 0"},
      {"fractional batch",
       {{29, "          max_batch: 1.5"}},
       "s.yaml:29:22: " + svc + "replica.max_batch: must be an integer, got '1.5'"},
      {"zero step time",
       {{29, "          decode_base_s: 0"}},
       "s.yaml:29:26: " + svc + "replica.decode_base_s: must be > 0, got 0"},
      {"negative prefill",
       {{29, "          prefill_s_per_token: -1e-4"}},
       "s.yaml:29:32: " + svc + "replica.prefill_s_per_token: must be >= 0, got -0.0001"},
      {"unknown replica kind",
       {{27, "          kind: tpu"}},
       "s.yaml:27:17: " + svc + "replica.kind: must be one of llm, plain, got 'tpu'"},
      {"unknown replica field",
       {{29, "          max_batches: 16"}},
       "s.yaml:29:11: " + svc + "replica.max_batches: unknown field"},
      {"plain zero concurrency",
       {{27, "          kind: plain"},
        {29, "          concurrency: 0"},
        {30, "          service_time: {dist: constant, mean_s: 1}"}},
       "s.yaml:29:24: " + svc + "replica.concurrency: must be >= 1, got 0"},
      {"plain zero service time",
       {{27, "          kind: plain"},
        {29, "          concurrency: 1"},
        {30, "          service_time: {dist: constant, mean_s: 0}"}},
       "s.yaml:30:50: " + svc + "replica.service_time.mean_s: must be > 0, got 0"},
      {"plain without service time",
       {{27, "          kind: plain"}, {29, "          concurrency: 1"}, {30, ""}},
       "s.yaml:27:11: " + svc + "replica.service_time: is required for kind plain"},
      // Cold start and price.
      {"negative provisioning",
       {{32, "          provisioning_s: -1"}},
       "s.yaml:32:27: " + svc + "cold_start.provisioning_s: must be >= 0, got -1"},
      {"negative model load",
       {{33, "          model_load_s: -5"}},
       "s.yaml:33:25: " + svc + "cold_start.model_load_s: must be >= 0, got -5"},
      {"negative model load with unit",
       {{33, "          model_load_s: -5m"}},
       "s.yaml:33:25: " + svc + "cold_start.model_load_s: must be >= 0, got -300"},
      {"negative price",
       {{34, "        price_per_gpu_hour: -2.5"}},
       "s.yaml:34:29: " + svc + "price_per_gpu_hour: must be >= 0, got -2.5"},
      // SLO.
      {"zero ttft",
       {{36, "          ttft_s: 0"}},
       "s.yaml:36:19: " + svc + "slo.ttft_s: must be > 0, got 0"},
      {"zero latency",
       {{37, "          latency_s: 0"}},
       "s.yaml:37:22: " + svc + "slo.latency_s: must be > 0, got 0"},
      {"zero attainment",
       {{38, "          attainment: 0"}},
       "s.yaml:38:23: " + svc + "slo.attainment: must be > 0"},
      {"attainment above 1",
       {{38, "          attainment: 1.5"}},
       "s.yaml:38:23: " + svc + "slo.attainment: must be <= 1, got 1.5"},
      {"attainment not a number",
       {{38, "          attainment: high"}},
       "s.yaml:38:23: " + svc + "slo.attainment: must be a finite number, got 'high'"},
      {"unknown slo field",
       {{38, "          attainement: 0.99"}},
       "s.yaml:38:11: " + svc + "slo.attainement: unknown field"},
      // Queue, windows, oracle.
      {"zero queue timeout",
       {{40, "          timeout_s: 0"}},
       "s.yaml:40:22: " + svc + "queue.timeout_s: must be > 0, got 0"},
      {"negative queue length",
       {{40, "          max_len: -1"}},
       "s.yaml:40:20: " + svc + "queue.max_len: must be >= 0, got -1"},
      {"zero oracle interval",
       {{41, "        oracle: {interval_s: 0}"}},
       "s.yaml:41:30: " + svc + "oracle.interval_s: must be >= 1, got 0"},
      {"zero metrics window",
       {{41, "        metrics_window_s: 0"}},
       "s.yaml:41:27: " + svc + "metrics_window_s: must be > 0, got 0"},
      {"unknown service field",
       {{34, "        price_per_gpu: 2.5"}},
       "s.yaml:34:9: " + svc + "price_per_gpu: unknown field"},
      // Trace block.
      {"zero rate multiplier",
       {{24, "          rate_multiplier: 0"}},
       "s.yaml:24:28: " + svc + "trace.rate_multiplier: must be > 0, got 0"},
      {"negative time compression",
       {{25, "          time_compression: -1"}},
       "s.yaml:25:29: " + svc + "trace.time_compression: must be >= 0.001, got -1"},
      {"negative window start",
       {{25, "          start_s: -10"}},
       "s.yaml:25:20: " + svc + "trace.start_s: must be >= 0, got -10"},
      {"zero jitter",
       {{25, "          jitter_s: 0"}},
       "s.yaml:25:21: " + svc + "trace.jitter_s: must be > 0, got 0"},
      {"unknown trace format",
       {{22, "          format: parquet"}},
       "s.yaml:22:19: " + svc +
           "trace.format: must be one of azure_llm, mooncake, alibaba_genai, rate_series, got "
           "'parquet'"},
      {"trace file missing",
       {{22, "          format: azure_llm"}},
       "s.yaml:22:11: " + svc + "trace.path: required for format azure_llm"},
      {"trace file unreadable",
       {{22, "          format: azure_llm"}, {23, "          path: /nonexistent/t.csv"}},
       "s.yaml:23:17: " + svc +
           "trace.path: unable to read trace /nonexistent/t.csv: No such file"},
      {"rate series going backwards",
       {{23, "          points: [[0, 2], [120, 1], [60, 0]]"}},
       "s.yaml:23:19: " + svc + "trace.points:"},
      {"rate series point not a pair",
       {{23, "          points: [[0, 2], [120]]"}},
       "s.yaml:23:28: " + svc + "trace.points[1]: must be [t_s, rate_per_s]"},
      {"rate series zero output",
       {{25, "          output_tokens: 0"}},
       "s.yaml:25:26: " + svc + "trace.output_tokens: must be >= 1, got 0"},
      {"empty rate series window",
       {{25, "          start_s: 500"}},
       "s.yaml:23:19: " + svc + "trace.points: the trace has no requests in its window"},
      // Values so large (or small) that the model would hang, exhaust memory or overflow its
      // integer nanoseconds.
      {"huge batch",
       {{29, "          max_batch: 2000000000"}},
       "s.yaml:29:22: " + svc + "replica.max_batch: must be <= 65536, got 2e+09"},
      {"huge plain concurrency",
       {{27, "          kind: plain"},
        {29, "          concurrency: 100000"},
        {30, "          service_time: {dist: constant, mean_s: 1}"}},
       "s.yaml:29:24: " + svc + "replica.concurrency: must be <= 65536, got 100000"},
      {"huge kv cache",
       {{30, "          kv_capacity_tokens: 1e30"}},
       "s.yaml:30:31: " + svc + "replica.kv_capacity_tokens: must be <= 1e+12, got 1e+30"},
      {"huge ttft",
       {{36, "          ttft_s: 1e300"}},
       "s.yaml:36:19: " + svc + "slo.ttft_s: must be <= 1e+09, got 1e+300"},
      {"huge provisioning",
       {{32, "          provisioning_s: 1e300"}},
       "s.yaml:32:27: " + svc + "cold_start.provisioning_s: must be <= 1e+09, got 1e+300"},
      {"huge queue timeout",
       {{40, "          timeout_s: 1e300"}},
       "s.yaml:40:22: " + svc + "queue.timeout_s: must be <= 1e+09, got 1e+300"},
      {"tiny oracle interval",
       {{41, "        oracle: {interval_s: 1e-12}"}},
       "s.yaml:41:30: " + svc + "oracle.interval_s: must be >= 1, got 1e-12"},
      {"huge oracle interval",
       {{41, "        oracle: {interval_s: 1e300}"}},
       "s.yaml:41:30: " + svc + "oracle.interval_s: must be <= 1e+09, got 1e+300"},
      {"huge metrics window",
       {{41, "        metrics_window_s: 1e9"}},
       "s.yaml:41:27: " + svc + "metrics_window_s: must be <= 86400, got 1e+09"},
      {"huge rate multiplier",
       {{24, "          rate_multiplier: 1e12"}},
       "s.yaml:24:28: " + svc + "trace.rate_multiplier: must be <= 1000, got 1e+12"},
      {"tiny time compression",
       {{25, "          time_compression: 1e-12"}},
       "s.yaml:25:29: " + svc + "trace.time_compression: must be >= 0.001, got 1e-12"},
      {"huge window start",
       {{25, "          start_s: 1e300"}},
       "s.yaml:25:20: " + svc + "trace.start_s: must be <= 1e+09, got 1e+300"},
      {"huge jitter",
       {{25, "          jitter_s: 1e300"}},
       "s.yaml:25:21: " + svc + "trace.jitter_s: must be <= 86400, got 1e+300"},
      {"rate series too many requests",
       {{23, "          points: [[0, 1e12], [120, 0]]"}},
       "s.yaml:23:19: " + svc + "trace.points: rate series: expects 120000000000000"},
      {"rate series too long",
       {{23, "          points: [[0, 2], [1e300, 0]]"}},
       "s.yaml:23:19: " + svc + "trace.points: rate series point 1: t_s spans more than 1e9 s"},
      // The policy block of the same workload.
      {"zero capacity per replica",
       {{19, "        capacity_per_replica: 0"}},
       "s.yaml:19:31: spec.workloads[0].policy.capacity_per_replica: must be > 0, got 0"},
      {"negative capacity per replica",
       {{19, "        capacity_per_replica: -2"}},
       "s.yaml:19:31: spec.workloads[0].policy.capacity_per_replica: must be > 0, got -2"},
      {"missing service",
       {{20, "      servicee:"}},
       "s.yaml:20:7: spec.workloads[0].servicee: unknown field"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto s = ParseScenario(With(c.edits), "s.yaml");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find(c.want), std::string::npos)
        << "want " << c.want << "\ngot  " << s.status().message();
    ExpectEveryLinePlaced(s.status().message(), "s.yaml");
  }
}

// Without a `compare` list the runs are the workload's own policy and static; Runs once read
// compare_nodes out of bounds here (a SIGSEGV in `validate` and `simulate`).
TEST(InferenceSpec, NoCompareListIsValid) {
  auto s = ParseScenario(With({{42, ""}}), "s.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto runs = s->Runs({});
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].label, "predictive");
  EXPECT_EQ((*runs)[1].label, "static");
}

TEST(InferenceSpec, EveryErrorIsReportedNotJustTheFirst) {
  auto s = ParseScenario(With({{29, "          max_batch: 0"},
                               {32, "          provisioning_s: -1"},
                               {36, "          ttft_s: 0"},
                               {40, "          timeout_s: 0"}}),
                         "s.yaml");
  ASSERT_FALSE(s.ok());
  for (const char* want : {"s.yaml:29:22:", "s.yaml:32:27:", "s.yaml:36:19:", "s.yaml:40:22:"}) {
    EXPECT_NE(s.status().message().find(want), std::string::npos) << want;
  }
}

// A scenario whose trace is a malformed file: the error sits at the scenario's trace.path
// and carries the trace file's own place (FILE:LINE: field NAME: ...).
TEST(InferenceSpec, MalformedTraceFilesNameTheTraceFileLineAndField) {
  struct Case {
    std::string name;
    std::string format;
    std::string file;  // name in the temp dir (plain text; the loaders read gzip or not)
    std::string text;
    std::string want;  // after "<trace path>"
  };
  const std::string azure = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  const std::vector<Case> cases = {
      {"azure missing column", "azure_llm", "a.csv", "TIMESTAMP,ContextTokens\n1,2\n",
       ":1: field GeneratedTokens: missing column"},
      {"azure unparsable number", "azure_llm", "b.csv",
       azure + "2023-11-16 18:17:03.9,12,3\n2023-11-16 18:17:04.0,1x2,3\n",
       ":3: field ContextTokens: unparsable number '1x2'"},
      {"azure backwards", "azure_llm", "c.csv",
       azure + "2023-11-16 18:17:05,1,1\n2023-11-16 18:17:04,1,1\n",
       ":3: field TIMESTAMP: time goes backwards"},
      {"azure empty", "azure_llm", "d.csv", "", ":1: empty file"},
      {"mooncake missing field", "mooncake", "e.jsonl", "{\"timestamp\": 0, \"input_length\": 5}\n",
       ":1: field output_length: missing field"},
      {"mooncake backwards", "mooncake", "f.jsonl",
       "{\"timestamp\": 10, \"input_length\": 5, \"output_length\": 2}\n"
       "{\"timestamp\": 9, \"input_length\": 5, \"output_length\": 2}\n",
       ":2: field timestamp: time goes backwards"},
      {"alibaba unparsable number", "alibaba_genai", "g.csv",
       "gmt_create,prompt_length,num_images_per_prompt,num_inference_steps\n"
       "2024-11-15 16:57:50,63,1,thirty\n",
       ":2: field num_inference_steps: unparsable number 'thirty'"},
  };
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("aiscale_inference_spec_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string trace = (dir / c.file).string();
    std::ofstream(trace) << c.text;
    // Written next to the trace and pointing at it by a relative path, as examples/ do.
    const std::string scenario = (dir / (c.file + ".yaml")).string();
    std::ofstream(scenario) << With(
        {{22, "          format: " + c.format}, {23, "          path: " + c.file}});
    auto s = LoadScenario(scenario);
    ASSERT_FALSE(s.ok());
    const std::string msg = s.status().message();
    EXPECT_NE(msg.find(scenario + ":23:17: spec.workloads[0].service.trace.path: "),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(trace + c.want), std::string::npos) << "want " << trace + c.want << "\n"
                                                           << msg;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace aiscale::sim
