#include "sim/traces/trace_spec.h"

#include <filesystem>

#include "core/bounded_file.h"
#include "sim/traces/alibaba_genai_trace.h"
#include "sim/traces/azure_llm_trace.h"
#include "sim/traces/mooncake_trace.h"
#include "sim/traces/rate_series.h"
#include "sim/traces/trace_transform.h"

namespace aiscale::sim::traces {
namespace {

// Replayed times are integer nanoseconds: windows stay within 1e9 s (31 years) and the
// compressed span and jitter within an int64. A multiplier of k replays each request about k
// times, so it stays within 1000.
constexpr double kMaxSeconds = 1e9;
constexpr double kMaxMultiplier = 1000;
constexpr double kMinCompression = 1e-3, kMaxCompression = 1e6;
constexpr double kMaxJitterSeconds = 86400;
constexpr double kMaxTokens = 10'000'000;  // per request, input or output

}  // namespace

std::string ResolvePath(const std::string& base_dir, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

std::unique_ptr<RequestSource> ParseTraceSpec(const config::ConfigNode& node,
                                              const std::string& base_dir) {
  using config::AtLeast;
  using config::Between;
  const size_t errors_before = node.errors()->size();
  if (!node.IsDefined() || !node.IsMap()) {
    node.Error("must be a map with at least `format`");
    return nullptr;
  }
  node.CheckKnown({"format", "path", "rate_multiplier", "time_compression", "start_s", "duration_s",
                   "jitter_s", "seed", "points", "input_tokens", "output_tokens"});
  const std::string format =
      node.Enum("format", "azure_llm", {"azure_llm", "mooncake", "alibaba_genai", "rate_series"});
  TransformOptions t;
  t.rate_multiplier =
      node.Number("rate_multiplier", 1, config::Bounds{0, kMaxMultiplier, /*min_exclusive=*/true});
  t.time_compression =
      node.Number("time_compression", 1, Between(kMinCompression, kMaxCompression));
  t.start_s = node.DurationSeconds("start_s", 0, Between(0, kMaxSeconds));
  t.duration_s = node.DurationSeconds("duration_s", 0, Between(0, kMaxSeconds));
  t.jitter_s = node.DurationSeconds("jitter_s", 60,
                                    config::Bounds{0, kMaxJitterSeconds, /*min_exclusive=*/true});
  t.seed = static_cast<uint64_t>(node.Int("seed", 1, AtLeast(0)));

  std::string path;
  if (node.Has("path")) {
    path = ResolvePath(base_dir, node.String("path", ""));
    // stat only: opening a FIFO with no writer would block here (issue 11).
    const auto checked =
        CheckRegularFile(path, format == "rate_series" ? kRateSeriesFileLimit : kTraceFileLimit);
    if (!checked.ok()) {
      node.ErrorAt("path", checked.status().message());
      return nullptr;
    }
  } else if (format != "rate_series") {
    node.ErrorAt("path", "required for format " + format);
    return nullptr;
  }

  std::unique_ptr<RequestSource> base;
  if (format == "azure_llm") {
    base = AzureLlmTrace(path);
  } else if (format == "mooncake") {
    base = MooncakeTrace(path);
  } else if (format == "alibaba_genai") {
    base = AlibabaGenAiTrace(path);
  } else {
    RateSeriesOptions r;
    r.seed = t.seed;
    r.input_tokens = static_cast<uint32_t>(node.Int("input_tokens", 512, Between(0, kMaxTokens)));
    r.output_tokens = static_cast<uint32_t>(node.Int("output_tokens", 128, Between(1, kMaxTokens)));
    if (!path.empty()) {
      auto pts = LoadRateSeriesCsv(path);
      if (!pts.ok()) {
        node.ErrorAt("path", pts.status().message());
        return nullptr;
      }
      r.points = std::move(pts).value();
    } else {
      for (const auto& item : node.Child("points").Items()) {
        const auto& raw = item.raw();
        if (!raw.IsSequence() || raw.size() != 2) {
          item.Error("must be [t_s, rate_per_s]");
          continue;
        }
        try {
          r.points.push_back(RatePoint{raw[0].as<double>(), raw[1].as<double>()});
        } catch (const YAML::Exception&) {
          item.Error("must be two numbers [t_s, rate_per_s]");
        }
      }
    }
    if (node.errors()->size() != errors_before) return nullptr;
    auto src = RateSeries(std::move(r));
    if (!src.ok()) {
      node.ErrorAt("points", src.status().message());
      return nullptr;
    }
    base = std::move(src).value();
  }
  if (node.errors()->size() != errors_before) return nullptr;
  if (t.IsIdentity()) return base;
  return Transformed(std::move(base), t);
}

}  // namespace aiscale::sim::traces
