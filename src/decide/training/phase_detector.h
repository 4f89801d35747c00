// PhaseDetector: which phase (load / compute / eval) a training job is in, how long it has been
// in it, and how long that phase usually lasts.
//
// The explicit `phase` signal wins when the job reports it. Otherwise the phase is inferred
// from the mean GPU utilization and samples/s: low utilization = load (GPUs wait on input,
// whether or not a trickle of samples flows), samples at high utilization = compute, no training
// samples at mid or high utilization = eval; no samples and idle GPUs (a restart) keep the
// current phase. Inferred
// changes need a utilization margin (`hysteresis`) and must persist `dwell_s`, so noise around a
// threshold does not flap. Completed phase lengths are averaged per phase (EWMA, with an EWMA
// of the squared deviation; one length alone is given a deviation of half itself) to predict a
// phase's remaining length and a cautious one (mean less one deviation); a phase never seen to
// end is predicted to last as long again as it has so far (the median guess for a length known
// only to exceed its age), and cautiously no longer than that.
// Pure: all state lives in the PersistentState passed in.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/signal.h"
#include "core/state.h"

namespace aiscale::decide {

struct PhaseDetectorConfig {
  double load_util_max = 50;  // below: load; at or above: compute (samples) or eval (none)
  double idle_util_max = 10;  // below, with no samples: a restart, which says nothing
  double hysteresis = 5;      // utilization margin to leave the current phase
  double dwell_s = 30;        // an inferred change must persist this long
  double length_ewma = 0.5;   // weight of the newest completed length
};

struct PhaseReading {
  std::optional<signals::Phase> reported;  // the `phase` signal, when present and valid
  std::optional<double> gpu_util;          // mean over GPUs, 0-100
  std::optional<double> samples_per_s;
};

struct PhaseEstimate {
  std::optional<signals::Phase> phase;  // nullopt: not known yet
  std::string source;                   // "reported", "inferred", "held", "unknown"
  double elapsed_s = 0;                 // time in the current phase
  std::optional<double> expected_remaining_s;
  std::optional<double> typical_length_s;      // EWMA of completed lengths of this phase
  std::optional<double> length_sd_s;           // and their deviation
  std::optional<double> cautious_remaining_s;  // typical less one deviation, less elapsed
  bool changed = false;                        // the phase changed at this update
  std::optional<signals::Phase> ended;         // when changed: the phase that ended
  double ended_length_s = 0;                   // and how long it lasted
};

// A detector's state keys, "<prefix>.phase" and so on: a caller that updates every tick makes
// them once.
struct PhaseKeys {
  explicit PhaseKeys(std::string_view prefix);
  std::string phase, since, cand, cand_since, len, count, var;
};

class PhaseDetector {
 public:
  explicit PhaseDetector(PhaseDetectorConfig c = {}) : c_(c) {}

  // The phase the signals point to right now, given the current one (for the hysteresis band);
  // nullopt when they say nothing (no samples and idle GPUs, or no signals at all).
  std::optional<signals::Phase> Classify(const PhaseReading& r,
                                         std::optional<signals::Phase> current) const;
  // Advances the detector to `now_s` (seconds, non-decreasing) with this tick's reading.
  PhaseEstimate Update(const PhaseReading& r, double now_s, PersistentState& state,
                       const std::string& prefix) const;
  PhaseEstimate Update(const PhaseReading& r, double now_s, PersistentState& state,
                       const PhaseKeys& keys) const;

 private:
  PhaseDetectorConfig c_;
};

}  // namespace aiscale::decide
