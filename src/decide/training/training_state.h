// TrainingState: what the training policy remembers between ticks, as numbers in the
// PersistentState (so the Controller persists it and a restart resumes it). Times are seconds
// on the policy's `now` clock; kNever marks "not yet".
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

#include "core/state.h"

namespace aiscale::decide {

inline constexpr double kNever = -1e300;

// Why the size last changed (how the reference-time budget and the rescale budget treat it).
enum class ChangeKind { kNone = 0, kFailure = 1, kReplacement = 2, kRescale = 3 };

struct TrainingState {
  bool initialized = false;
  int last_asked = 0;  // the size the policy last asked for
  int reference = 0;   // the job's requested size
  int prev_current = 0;
  int prev_ready = 0;
  int pending = 0;  // ChangeKind of the change last asked for
  double last_tick = kNever;
  double change_at = kNever;   // last observed change of size (any cause)
  int change_kind = 0;         // ChangeKind of that change
  double settled_at = kNever;  // first tick with ready >= current after that change
  double rescale_at = kNever;  // last rescale observed (min_dwell runs from here)
  double epoch_at_rescale = 0;
  double tokens = 0;          // rescale budget left, as of tokens_at
  double tokens_at = kNever;  // kNever: the bucket starts full
  bool io_shrunk = false;     // a load was shrunk; grow back to io_from when it ends
  int io_from = 0;            // the size before that shrink
  int io_n1 = 0;              // IO-bound load: first size seen (0: none yet) and its GPU util
  double io_u1 = 0;
  int io_size = 0;         // learned: fewest nodes that keep a load IO-bound (0: unknown)
  int held_phase = 0;      // 1 + the phase a phase-sized rescale is held for; 0: none
  double size_util_s = 0;  // util x seconds at the current size (not restarting)
  double size_util_t = 0;
  double deficit_since = kNever;
  double wall_s = 0;        // elapsed, as the policy saw it
  double ref_s = 0;         // the same work at the reference size
  double samples_load = 0;  // training samples processed per phase
  double samples_compute = 0;
  double train_s = 0;          // time with training samples (not restarting)
  double load_s = 0;           // time in load without training samples (not restarting)
  double eval_s = 0;           // time in eval (not restarting)
  int phase_size = 0;          // size when the current phase began
  bool phase_resized = false;  // the size changed during the current phase
  double phase_util_s = 0;     // sum of util x seconds in the current phase
  double phase_util_t = 0;
  bool completed = false;  // the job reported no samples remaining after training was seen

  static TrainingState Load(const PersistentState& s);
  void Save(PersistentState& s) const;
};

// Where the TrainingState lives in a PersistentState: its fields packed in one vector under
// kKey (in the order training_state.cc lists them; a new field goes at the end, so an older
// state reads it as its default). A state of the older layout, one key per field, is read and
// packed when the slots are made, its keys erased. One lookup a tick: with a key per field,
// finding 34 keys among scattered map nodes was two thirds of the training policy's tick. The
// slots stay valid while kKey is not erased; the training policy erases no key.
class TrainingStateSlots {
 public:
  explicit TrainingStateSlots(PersistentState& s);
  TrainingState Load() const;               // as TrainingState::Load
  void Save(const TrainingState& t) const;  // as TrainingState::Save

  static constexpr std::string_view kKey = "tr.fields";

 private:
  std::vector<double>* fields_ = nullptr;
};

}  // namespace aiscale::decide
