#include "core/signal.h"

#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace aiscale::signals {

std::string_view PhaseName(Phase p) {
  switch (p) {
    case Phase::kLoad:
      return "load";
    case Phase::kCompute:
      return "compute";
    case Phase::kEval:
      return "eval";
  }
  return "unknown";
}

Range ValidRange(std::string_view signal) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr std::array<std::pair<std::string_view, Range>, 20> kRanges = {{
      {kGpuUtil, {0, 100}},           {kSmActive, {0, 1}},          {kGpuMemUsedFrac, {0, 1}},
      {kGpuPowerW, {0, kInf}},        {kNetRxBytesPerS, {0, kInf}}, {kCpuUtil, {0, 100}},
      {kSamplesPerS, {0, kInf}},      {kStepsPerS, {0, kInf}},      {kPhase, {0, 2}},
      {kEpochProgress, {0, 1}},       {kEpoch, {0, kInf}},          {kJobProgress, {0, 1}},
      {kSamplesRemaining, {0, kInf}}, {kRequestRate, {0, kInf}},    {kConcurrency, {0, kInf}},
      {kQueueLen, {0, kInf}},         {kLatencyP99S, {0, kInf}},    {kTtftP99S, {0, kInf}},
      {kTokensPerS, {0, kInf}},       {kKvCacheUsage, {0, 1}},
  }};
  for (const auto& [name, range] : kRanges) {
    if (name == signal) return range;
  }
  return {-kInf, kInf};
}

bool IsValidValue(std::string_view signal, double v) { return ValidRange(signal).Contains(v); }

}  // namespace aiscale::signals
