// Telemetry: aiscale's own metrics (ticks, fetch latency, decisions, apply errors), kept in
// memory and rendered as Prometheus text (exposition format 0.0.4) for /metrics.
//
// Why here: the controller, collector, sources and actuators all count things and the server
// renders them; core is the only layer they all see. Families are declared once (name, type,
// help, histogram buckets); series are created on first use by label set. Updating an
// undeclared family or with the wrong type is ignored and counted in
// aiscale_telemetry_misuse_total, never a crash. Thread-safe; updates take one mutex.
//
//   Telemetry t;
//   t.DeclareCounter("aiscale_ticks_total", "Controller ticks completed.");
//   t.Add("aiscale_ticks_total", {});
//   t.DeclareHistogram("aiscale_tick_duration_seconds", "Tick wall time.", {0.01, 0.1, 1});
//   t.Observe("aiscale_tick_duration_seconds", {}, 0.004);
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiscale {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Telemetry {
 public:
  void DeclareCounter(std::string name, std::string help);
  void DeclareGauge(std::string name, std::string help);
  void DeclareHistogram(std::string name, std::string help, std::vector<double> buckets);

  void Add(std::string_view name, const MetricLabels& labels, double v = 1);  // counter
  void Set(std::string_view name, const MetricLabels& labels, double v);      // gauge
  void Observe(std::string_view name, const MetricLabels& labels, double v);  // histogram
  // Removes every series of a gauge family whose labels include `label`=`value` (a workload
  // that left the config stops being reported).
  void Forget(std::string_view name, std::string_view label, std::string_view value);

  // Current value of a counter or gauge series (0 when absent), or of
  // aiscale_telemetry_misuse_total; for tests and the API.
  double Value(std::string_view name, const MetricLabels& labels) const;
  // Prometheus text format 0.0.4: # HELP, # TYPE, then series sorted by name and labels;
  // label values escaped (\\, \", \n); histograms as _bucket{le=...}, _sum, _count.
  std::string RenderText() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series {
    double value = 0;             // counter, gauge
    std::vector<double> buckets;  // histogram: cumulative counts per bound
    double sum = 0;
    double count = 0;
  };
  struct Family {
    Type type = Type::kCounter;
    std::string help;
    std::vector<double> bounds;  // histogram upper bounds, ascending
    std::map<MetricLabels, Series> series;
  };
  void Declare(std::string name, std::string help, Type type, std::vector<double> bounds);
  // The series of `labels` in family `name` of type `type`, created on first use; null when
  // the family is undeclared, of another type, or the labels are invalid. Caller holds mu_.
  Series* Find(std::string_view name, Type type, const MetricLabels& labels);
  static void RenderFamily(std::string& out, const std::string& name, const Family& f);

  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
  double misuse_ = 0;
};

}  // namespace aiscale
