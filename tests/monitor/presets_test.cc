#include "monitor/presets.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/signal.h"
#include "monitor/scrape_eval.h"
#include "monitor/testdata_util.h"

namespace aiscale::monitor {
namespace {

using testing::ReadTestdata;

std::vector<Scrape> HistoryOf(const std::vector<std::string>& files) {
  std::vector<Scrape> out;
  for (size_t i = 0; i < files.size(); ++i) {
    auto e = ParseExposition(ReadTestdata(files[i]), ExpositionFormat::kPrometheusText);
    EXPECT_TRUE(e.ok()) << files[i] << ": " << e.status().message();
    if (!e.ok()) std::abort();
    out.push_back(Scrape{AtSeconds(1000 + 30.0 * static_cast<double>(i)),
                         std::make_shared<const Exposition>(std::move(e).value())});
  }
  return out;
}

TEST(Presets, MapRealPayloadsOntoSignals) {
  struct Case {
    std::string name;
    std::string preset;
    std::vector<std::string> files;  // oldest first
    std::string_view signal;
    std::vector<double> want;  // one per point, in label order
  };
  const std::vector<Case> cases = {
      {"dcgm gpu_util", "dcgm", {"dcgm_exporter_v3.txt"}, signals::kGpuUtil, {97, 12}},
      {"dcgm memory fraction",
       "dcgm",
       {"dcgm_exporter_v3.txt"},
       signals::kGpuMemUsedFrac,
       {0.75, 0.25}},
      {"dcgm power", "dcgm", {"dcgm_exporter_v3.txt"}, signals::kGpuPowerW, {612.344, 121.502}},
      {"dcgm sm_active", "dcgm", {"dcgm_exporter_v3.txt"}, signals::kSmActive, {0.873, 0.051}},
      {"dcgm gr_engine_active",
       "dcgm",
       {"dcgm_exporter_v3.txt"},
       kGrEngineActive,
       {0.981234, 0.105}},
      {"dcgm 2.x gpu_util", "dcgm", {"dcgm_exporter_v2_k8s.txt"}, signals::kGpuUtil, {64}},
      {"dcgm lower-case hostname",
       "dcgm",
       {"dcgm_hostname_lower.txt"},
       signals::kGpuUtil,
       {55, 45}},
      {"dcgm 1.x old names: util",
       "dcgm",
       {"dcgm_gpu_monitoring_tools_1x.txt"},
       signals::kGpuUtil,
       {73}},
      {"dcgm 1.x old names: memory",
       "dcgm",
       {"dcgm_gpu_monitoring_tools_1x.txt"},
       signals::kGpuMemUsedFrac,
       {0.25}},
      {"dcgm 1.x old names: power",
       "dcgm",
       {"dcgm_gpu_monitoring_tools_1x.txt"},
       signals::kGpuPowerW,
       {31.737}},
      {"vllm v1 concurrency", "vllm", {"vllm_v1.txt"}, signals::kConcurrency, {3}},
      {"vllm v1 queue", "vllm", {"vllm_v1_later.txt"}, signals::kQueueLen, {2}},
      {"vllm v1 kv cache (new name)",
       "vllm",
       {"vllm_v1_later.txt"},
       signals::kKvCacheUsage,
       {0.4375}},
      {"vllm v0 kv cache (old name)", "vllm", {"vllm_v0.txt"}, signals::kKvCacheUsage, {0.125}},
      {"vllm v0 concurrency", "vllm", {"vllm_v0.txt"}, signals::kConcurrency, {3}},
      {"vllm request rate needs two scrapes", "vllm", {"vllm_v1.txt"}, signals::kRequestRate, {}},
      // 200 more successful requests (any finished_reason) in 30 s.
      {"vllm request rate",
       "vllm",
       {"vllm_v1.txt", "vllm_v1_later.txt"},
       signals::kRequestRate,
       {200.0 / 30}},
      // Window: 196 of 200 <= 1.0 s, 200 <= 2.5 s: rank 198 -> 1.0 + 1.5 * 2/4.
      {"vllm ttft p99 over the window",
       "vllm",
       {"vllm_v1.txt", "vllm_v1_later.txt"},
       signals::kTtftP99S,
       {1.75}},
      {"vllm e2e p99 over the window",
       "vllm",
       {"vllm_v1.txt", "vllm_v1_later.txt"},
       signals::kLatencyP99S,
       {7.5}},
      {"training throughput", "training", {"training.txt"}, signals::kSamplesPerS, {1843.5}},
      {"training phase",
       "training",
       {"training.txt"},
       signals::kPhase,
       {static_cast<double>(signals::Phase::kCompute)}},
      {"training epoch", "training", {"training.txt"}, signals::kEpoch, {2}},
      {"training epoch progress", "training", {"training.txt"}, signals::kEpochProgress, {0.375}},
      {"training remaining", "training", {"training.txt"}, signals::kSamplesRemaining, {2.5088e6}},
      {"training world size", "training", {"training.txt"}, kWorldSize, {8}},
      {"training steps need two scrapes", "training", {"training.txt"}, signals::kStepsPerS, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Preset* p = FindPreset(c.preset);
    ASSERT_NE(p, nullptr);
    const PresetSignal* ps = p->Find(c.signal);
    ASSERT_NE(ps, nullptr);
    auto history = HistoryOf(c.files);
    auto got = EvaluatePresetSignal(*ps, history);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(got->size(), c.want.size());
    for (size_t i = 0; i < c.want.size(); ++i) {
      EXPECT_NEAR((*got)[i].value, c.want[i], 1e-9) << i;
    }
  }
}

TEST(Presets, PhaseAsAPlainNumber) {
  auto e = ParseExposition("aiscale_training_phase 2\n", ExpositionFormat::kPrometheusText);
  ASSERT_TRUE(e.ok());
  std::vector<Scrape> h = {
      {AtSeconds(1), std::make_shared<const Exposition>(std::move(e).value())}};
  auto got = EvaluatePresetSignal(*FindPreset("training")->Find(signals::kPhase), h);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].value, 2);
}

TEST(Presets, MissingMetricIsNotFoundAndUnknownPresets) {
  auto history = HistoryOf({"vllm_v1.txt"});
  auto got = EvaluatePresetSignal(*FindPreset("dcgm")->Find(signals::kGpuUtil), history);
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(got.status().IsNotFound());
  EXPECT_NE(got.status().message().find("DCGM_FI_DEV_GPU_UTIL, dcgm_gpu_utilization"),
            std::string::npos);
  EXPECT_EQ(FindPreset("nope"), nullptr);
  ASSERT_NE(FindPreset(""), nullptr);
  EXPECT_TRUE(FindPreset("")->signals.empty());
  EXPECT_EQ(FindPreset("vllm")->Find(signals::kGpuUtil), nullptr);
}

}  // namespace
}  // namespace aiscale::monitor
