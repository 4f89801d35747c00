// MoveEvidence: whether what was measured at two sizes backs a move between them by more than
// the noise seen there (issue 27: a size once measured worse must not be retried on one noisy
// reading).
//
// A move is judged on the quantity the size planner chose it by: job throughput (samples/s)
// when staying misses the completion budget, throughput per node when the move is a saving.
// The difference of the two sizes' robust means is compared with its standard error (from
// each size's spread and readings, ThroughputModel::Evidence): z = difference / standard error.
// A move to a size never measured is the prior's call (exploring), so it is not judged here;
// a move away from a size not measured yet, to one that was, waits for a reading where the job
// is (what it paid a restart to learn). From a size with an earlier stint, the move is judged
// against those readings too and the weaker comparison decides. Pure; value types.
#pragma once

#include <string>

#include "decide/training/throughput_model.h"

namespace aiscale::decide {

struct MoveEvidence {
  SizeEvidence from, to;
  bool per_node = false;  // judged on samples/s per node (a saving), else on samples/s
  bool judged = false;    // both sizes measured
  double diff = 0;        // measured advantage of `to` over `from` (samples/s, or per node)
  double se = 0;          // its standard error
  double z = 0;           // diff / se; +-kHugeZ when se is 0 (readings without any spread)
  // `from` drifted: `from` holds its earlier readings only, `from_now` those of its stint.
  bool drifted = false;
  SizeEvidence from_now;
  double drift_z = 0;
  // Judged against `from`'s earlier readings without a drift beyond kDriftZ, because they back
  // the move less than all of `from`'s: a stint that moved by less than that still must not tip
  // a comparison across eras (CI of 2026-12-07: 2 at 381, 3 at 408, back at 2 about 309 at a
  // drift z of -2.8; all of 2, 333, against 3 sent the job back to 3 at z = 3.7).
  // `whole_z`: the z over all of `from`'s readings.
  bool era = false;
  double whole_z = 0;

  // Backed beyond `needed` standard errors; true when `to` was never measured (the prior's
  // call), false when only `from` lacks readings.
  bool Backs(double needed) const { return judged ? z >= needed : to.count <= 0; }
  // "measured 939±12 samples/s (40 readings) at 2 vs 541±9 (30) at 3: z = 17" or
  // "3 never measured: the model's prior decides", after the drift when there was one.
  std::string Text() const;

 private:
  std::string JudgedText() const;
};

inline constexpr double kDriftZ = 3;

MoveEvidence JudgeMove(const ThroughputModel& model, int from, int to, bool per_node);

}  // namespace aiscale::decide
