// TimelinePoint: one sample of a workload during a run (every report interval), typed.
//
// Why: charts, verdicts and report.json read the same fields by member, not by string key. A
// field the workload kind does not report is NaN: a gap in a chart, absent from report.json.
// kTimelineFields is the one list of the fields' report.json names.
#pragma once

#include <array>
#include <limits>
#include <string_view>

namespace aiscale::report {

struct TimelinePoint {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double t_s = 0;           // seconds since the run began
  double desired = kNaN;    // replicas (nodes) asked for
  double ready = kNaN;      // replicas (nodes) doing work
  double gpu_hours = kNaN;  // cumulative
  // Training.
  double phase = kNaN;  // 0 load, 1 compute, 2 eval, -1 finished
  double restarting = kNaN;
  double samples_per_s = kNaN;
  double steps_per_s = kNaN;
  double gpu_util = kNaN;  // % of allocated GPUs
  double job_progress = kNaN;
  // Serving.
  double arrived = kNaN;  // cumulative requests
  double draining = kNaN;
  double request_rate = kNaN;
  double queue_len = kNaN;
  double latency_p99_s = kNaN;  // over the metrics window before the point
  double ttft_p99_s = kNaN;
  double interval_latency_p99_s = kNaN;  // of the requests completed since the previous point
  double interval_ttft_p99_s = kNaN;
  double missed = kNaN;  // cumulative requests that ended outside the SLO
  double asleep = kNaN;  // replicas kept asleep (the warm tier; absent without one)
};

struct TimelineField {
  std::string_view key;  // the report.json name
  double TimelinePoint::*member;
};

inline constexpr std::array<TimelineField, 20> kTimelineFields = {{
    {"t_s", &TimelinePoint::t_s},
    {"desired", &TimelinePoint::desired},
    {"ready", &TimelinePoint::ready},
    {"gpu_hours", &TimelinePoint::gpu_hours},
    {"phase", &TimelinePoint::phase},
    {"restarting", &TimelinePoint::restarting},
    {"samples_per_s", &TimelinePoint::samples_per_s},
    {"steps_per_s", &TimelinePoint::steps_per_s},
    {"gpu_util", &TimelinePoint::gpu_util},
    {"job_progress", &TimelinePoint::job_progress},
    {"arrived", &TimelinePoint::arrived},
    {"draining", &TimelinePoint::draining},
    {"request_rate", &TimelinePoint::request_rate},
    {"queue_len", &TimelinePoint::queue_len},
    {"latency_p99_s", &TimelinePoint::latency_p99_s},
    {"ttft_p99_s", &TimelinePoint::ttft_p99_s},
    {"interval_latency_p99_s", &TimelinePoint::interval_latency_p99_s},
    {"interval_ttft_p99_s", &TimelinePoint::interval_ttft_p99_s},
    {"missed", &TimelinePoint::missed},
    {"asleep", &TimelinePoint::asleep},
}};

}  // namespace aiscale::report
