#include "decide/training/training_state.h"

#include <string>
#include <type_traits>
#include <vector>

namespace aiscale::decide {
namespace {

// One list, read and written the same way, so a field cannot be saved under one key and
// loaded under another.
template <typename State, typename Fn>
void Fields(State& t, Fn&& f) {
  f("tr.init", t.initialized);
  f("tr.last_asked", t.last_asked);
  f("tr.reference", t.reference);
  f("tr.prev_current", t.prev_current);
  f("tr.prev_ready", t.prev_ready);
  f("tr.pending", t.pending);
  f("tr.last_tick", t.last_tick);
  f("tr.change_at", t.change_at);
  f("tr.change_kind", t.change_kind);
  f("tr.settled_at", t.settled_at);
  f("tr.rescale_at", t.rescale_at);
  f("tr.epoch_at_rescale", t.epoch_at_rescale);
  f("tr.tokens", t.tokens);
  f("tr.tokens_at", t.tokens_at);
  f("tr.io_shrunk", t.io_shrunk);
  f("tr.io_from", t.io_from);
  f("tr.io_n1", t.io_n1);
  f("tr.io_u1", t.io_u1);
  f("tr.io_size", t.io_size);
  f("tr.held_phase", t.held_phase);
  f("tr.size_util_s", t.size_util_s);
  f("tr.size_util_t", t.size_util_t);
  f("tr.deficit_since", t.deficit_since);
  f("tr.wall_s", t.wall_s);
  f("tr.ref_s", t.ref_s);
  f("tr.samples_load", t.samples_load);
  f("tr.samples_compute", t.samples_compute);
  f("tr.train_s", t.train_s);
  f("tr.load_s", t.load_s);
  f("tr.eval_s", t.eval_s);
  f("tr.phase_size", t.phase_size);
  f("tr.phase_resized", t.phase_resized);
  f("tr.phase_util_s", t.phase_util_s);
  f("tr.phase_util_t", t.phase_util_t);
}

// The keys as strings, built once: Load and Save run every tick for every training job, and
// building a std::string per field per tick (most keys are past the small-string size) was a
// quarter of a policy-mix tick.
const std::vector<std::string>& Keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    TrainingState t;
    Fields(t, [&](const char* key, auto&) { k.emplace_back(key); });
    return k;
  }();
  return keys;
}

}  // namespace

TrainingState TrainingState::Load(const PersistentState& s) {
  TrainingState t;
  const std::vector<std::string>& keys = Keys();
  size_t i = 0;
  Fields(t, [&](const char*, auto& field) {
    using T = std::decay_t<decltype(field)>;
    field = static_cast<T>(s.Get(keys[i++], static_cast<double>(field)));
  });
  return t;
}

void TrainingState::Save(PersistentState& s) const {
  const std::vector<std::string>& keys = Keys();
  size_t i = 0;
  Fields(*this, [&](const char*, const auto& field) {
    // In place: the same one-element vector as PersistentState::Set, without reallocating it.
    s.values[keys[i++]].assign(1, static_cast<double>(field));
  });
}

}  // namespace aiscale::decide
