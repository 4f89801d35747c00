// TrainingTick: everything one TrainingPolicy::Recommend call reads, learns and decides, so the
// policy's rules (training.h's list) can each be one short function tried in order.
//
// Internal to the training policy (training.cc, training_learn.cc, training_rules.cc); not a
// seam. A tick is built, advanced by ObserveTick (size changes, phase, throughput learning),
// then offered to the rules; the first rule that returns true has written `rec`. Pure: the
// PersistentState passed to Recommend is the only memory, loaded once and saved once.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/policy.h"
#include "decide/policies/training.h"
#include "decide/training/phase_detector.h"
#include "decide/training/throughput_model.h"
#include "decide/training/training_state.h"

namespace aiscale::decide {

inline constexpr double kTrainingHuge = 1e30;

// The four throughput fits, loaded and saved together.
struct TrainingFits {
  ThroughputModel load;     // training samples/s during loads that train
  ThroughputModel compute;  // training samples/s during compute
  // Phases without training samples (load from storage, eval) are learned by their duration:
  // "throughput" = phases per second, one observation per phase that ran at one size.
  ThroughputModel dur_load;
  ThroughputModel dur_eval;

  // Where the four live in a state, found once per tick; keys missing are added empty, as
  // Save would add them. Valid while no key of the state is erased.
  using Slots = std::array<std::vector<double>*, 4>;
  static Slots Find(PersistentState& s);

  static TrainingFits Load(const Slots& slots, const ThroughputPrior& prior);
  void Save(const Slots& slots) const;
};

// This tick's readings (means of the job's signals).
struct TrainingInputs {
  std::optional<double> samples, remaining, epoch, util;
  std::optional<signals::Phase> phase;
  std::string missing;  // first required signal without data, with its status
};

TrainingInputs ReadTrainingInputs(const WorkloadSignals& s);

struct TrainingTick {
  const TrainingConfig& c;
  const WorkloadContext& ctx;
  const PolicyInput& in;
  PersistentState& state;
  double now = 0;
  int g = 1;  // granularity
  TrainingInputs x;
  TrainingStateSlots slots;  // where `t` is loaded from and saved to
  TrainingState t;
  TrainingFits::Slots fit_slots;  // where `fits` is loaded from and saved to
  TrainingFits fits;
  PhaseEstimate ph;
  bool restarting = false;
  double restart_end = kTrainingHuge;
  double phase_util = -1;  // mean GPU util in the current phase so far; -1 unknown
  std::optional<signals::Phase> learn_phase;
  std::string note;  // prefix for the reason (a replacement that could not be made)
  Recommendation rec;

  TrainingTick(const TrainingConfig& cfg, const WorkloadContext& wctx, const PolicyInput& pin,
               PersistentState& st);
  void Fact(std::string_view k, double v) { rec.facts.emplace_back(std::string(k), v); }
  // Relative duration of a sample-less phase at n nodes (any scale, consistent across n).
  double PhaseTime(signals::Phase p, int n, bool current_phase) const;
  // Seconds per sample of model m at n; huge without data.
  static double Y(const ThroughputModel& m, int n);
  // Seconds until the bucket holds `want` tokens (0 when it does; huge when it never will).
  double SecondsToTokens(double want) const;
  void Save();
};

// Size changes since the last tick, phase detection and learning (training_learn.cc).
void ObserveTick(TrainingTick& k);

// The rules, in order (training_rules.cc). Each returns true when it decided.
bool RuleCompleted(TrainingTick& k);
bool RuleReplaceFailedNodes(TrainingTick& k);
bool RuleHoldRestarting(TrainingTick& k);
bool RuleHoldMissingSignal(TrainingTick& k);
bool RuleHoldBudget(TrainingTick& k);
bool RuleIoBoundLoad(TrainingTick& k);
bool RuleHoldForPhase(TrainingTick& k);
bool RuleHoldNoData(TrainingTick& k);
bool RuleRescale(TrainingTick& k);

std::string TrainingNum(double v);

}  // namespace aiscale::decide
