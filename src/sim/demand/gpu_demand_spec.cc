#include "sim/demand/gpu_demand_spec.h"

#include <cmath>
#include <filesystem>
#include <optional>

#include "core/bounded_file.h"
#include "sim/traces/helios_trace.h"
#include "sim/traces/trace_spec.h"

namespace aiscale::sim::demand {
namespace {

constexpr double kMaxWindowSeconds = 1e9;

// `points: [[t_s, gpus], ...]`: gpus[i] from t[i] to t[i+1]; the last point ends the curve.
std::optional<traces::DemandSeries> InlinePoints(const config::ConfigNode& trace) {
  const config::ConfigNode list = trace.Child("points");
  if (!list.IsSequence()) {
    trace.ErrorAt("points", "required for format points: a list of [t_s, gpus]");
    return std::nullopt;
  }
  traces::DemandSeries s;
  bool ok = true;
  for (const config::ConfigNode& item : list.Items()) {
    const YAML::Node& raw = item.raw();
    double t = 0, g = 0;
    try {
      if (raw.IsSequence() && raw.size() == 2) {
        t = raw[0].as<double>();
        g = raw[1].as<double>();
      } else {
        t = g = std::nan("");
      }
    } catch (const YAML::Exception&) {
      t = g = std::nan("");
    }
    if (!std::isfinite(t) || !std::isfinite(g) || g != std::floor(g) || g < 0 ||
        g > static_cast<double>(traces::kMaxDemandGpus)) {
      item.Error("must be [t_s, gpus] with gpus a whole number in [0, " +
                 std::to_string(traces::kMaxDemandGpus) + "]");
      ok = false;
      continue;
    }
    s.points.push_back({t, static_cast<int64_t>(g)});
  }
  if (!ok) return std::nullopt;
  if (s.points.size() < 2) {
    trace.ErrorAt("points", "needs at least two points (the last one ends the curve)");
    return std::nullopt;
  }
  s.end_s = s.points.back().t_s;
  s.points.pop_back();
  return s;
}

std::optional<traces::DemandSeries> FromFile(const config::ConfigNode& trace) {
  if (!trace.Has("path")) {
    trace.ErrorAt("path", "required for format helios_vc");
    return std::nullopt;
  }
  const std::string file = trace.file();
  const std::string base =
      file.empty() ? std::string() : std::filesystem::path(file).parent_path().string();
  const std::string path = traces::ResolvePath(base, trace.String("path", ""));
  // stat only: opening a FIFO with no writer would block here (issue 11).
  if (auto checked = CheckRegularFile(path, kTraceFileLimit); !checked.ok()) {
    trace.ErrorAt("path", checked.status().message());
    return std::nullopt;
  }
  auto s = traces::LoadHeliosVcSequence(path);
  if (!s.ok()) {
    trace.ErrorAt("path", s.status().message());
    return std::nullopt;
  }
  return std::move(s).value();
}

std::shared_ptr<const traces::DemandSeries> ReadCurve(const config::ConfigNode& trace,
                                                      std::string& source) {
  if (!trace.IsDefined() || !trace.IsMap()) {
    trace.Error("must be a map with format and path (or points)");
    return nullptr;
  }
  trace.CheckKnown({"format", "path", "points", "start_s", "duration_s"});
  const std::string format = trace.Enum("format", "helios_vc", {"helios_vc", "points"});
  const double start = trace.DurationSeconds("start_s", 0, config::Between(0, kMaxWindowSeconds));
  const double length =
      trace.DurationSeconds("duration_s", 0, config::Between(0, kMaxWindowSeconds));
  std::optional<traces::DemandSeries> whole =
      format == "points" ? InlinePoints(trace) : FromFile(trace);
  if (!whole) return nullptr;
  source = format == "points" ? "points" : "helios_vc " + trace.String("path", "");
  if (Status v = traces::ValidateDemand(*whole, format); !v.ok()) {
    trace.ErrorAt(format == "points" ? "points" : "path", v.message());
    return nullptr;
  }
  auto window = traces::DemandWindow(*whole, start, length);
  if (!window.ok()) {
    trace.ErrorAt("start_s", window.status().message());
    return nullptr;
  }
  return std::make_shared<const traces::DemandSeries>(std::move(window).value());
}

}  // namespace

std::shared_ptr<const GpuDemandSpec> GpuDemandSpec::Parse(const config::ConfigNode& body) {
  const size_t before = body.errors()->size();
  if (!body.IsDefined() || !body.IsMap()) {
    body.Error("a GpuDemand needs a `demand` map with trace and restart_s");
    return nullptr;
  }
  body.CheckKnown({"trace", "restart_s", "signal"});
  auto spec = std::make_shared<GpuDemandSpec>();
  spec->restart_s = body.DurationSeconds("restart_s", 0, config::Between(0, kMaxRestartSeconds));
  spec->signal = body.String("signal", kGpuDemandSignal);
  if (spec->signal.empty()) body.ErrorAt("signal", "must not be empty");
  spec->series = ReadCurve(body.Child("trace"), spec->source);
  if (!spec->series || body.errors()->size() > before) return nullptr;
  return spec;
}

}  // namespace aiscale::sim::demand
