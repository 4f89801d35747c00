#include "decide/training/training_state.h"

#include <algorithm>
#include <array>
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

// The keys as strings, built once, and their order in the map: Load and Save run every tick
// for every training job. Building a std::string per field per tick (most keys are past the
// small-string size) was a quarter of a policy-mix tick, and a map lookup per field still an
// eighth of the training policy's; one ordered walk over the map does it in a pass.
struct Layout {
  std::vector<std::string> keys;  // in Fields order
  std::vector<size_t> by_key;     // indices into keys, in key order
};

constexpr size_t kMaxFields = TrainingStateSlots::kMaxFields;

const Layout& Keys() {
  static const Layout layout = [] {
    Layout l;
    TrainingState t;
    Fields(t, [&](const char* key, auto&) { l.keys.emplace_back(key); });
    for (size_t i = 0; i < l.keys.size(); ++i) l.by_key.push_back(i);
    std::sort(l.by_key.begin(), l.by_key.end(),
              [&](size_t a, size_t b) { return l.keys[a] < l.keys[b]; });
    return l;
  }();
  return layout;
}

}  // namespace

TrainingState TrainingState::Load(const PersistentState& s) {
  TrainingState t;
  const Layout& l = Keys();
  std::array<double, kMaxFields> v{};
  size_t i = 0;
  Fields(t, [&](const char*, const auto& field) { v[i++] = static_cast<double>(field); });
  // As PersistentState::Get: the first value of a key, or the field's default when the key is
  // missing or empty.
  auto it = s.values.lower_bound(l.keys[l.by_key.front()]);
  for (size_t j : l.by_key) {
    const std::string& key = l.keys[j];
    int order = -1;  // it->first against key, compared once per step
    while (it != s.values.end() && (order = it->first.compare(key)) < 0) ++it;
    if (it == s.values.end()) break;
    if (order == 0 && !it->second.empty()) v[j] = it->second.front();
  }
  i = 0;
  Fields(t, [&](const char*, auto& field) {
    using T = std::decay_t<decltype(field)>;
    field = static_cast<T>(v[i++]);
  });
  return t;
}

void TrainingState::Save(PersistentState& s) const { TrainingStateSlots(s).Save(*this); }

TrainingStateSlots::TrainingStateSlots(PersistentState& s) {
  const Layout& l = Keys();
  auto it = s.values.lower_bound(l.keys[l.by_key.front()]);
  for (size_t j : l.by_key) {
    const std::string& key = l.keys[j];
    int order = 1;  // it->first against key, compared once per step
    while (it != s.values.end() && (order = it->first.compare(key)) < 0) ++it;
    if (it == s.values.end() || order != 0) it = s.values.emplace_hint(it, key, 0);
    slots_[j] = &it->second;
    ++it;
  }
}

TrainingState TrainingStateSlots::Load() const {
  TrainingState t;
  size_t i = 0;
  // As PersistentState::Get: the first value, or the field's default when the key is empty.
  Fields(t, [&](const char*, auto& field) {
    const std::vector<double>& v = *slots_[i++];
    if (!v.empty()) field = static_cast<std::decay_t<decltype(field)>>(v.front());
  });
  return t;
}

void TrainingStateSlots::Save(const TrainingState& t) const {
  size_t i = 0;
  // In place: the same one-element vector as PersistentState::Set, without reallocating it.
  Fields(t, [&](const char*, const auto& field) {
    slots_[i++]->assign(1, static_cast<double>(field));
  });
}

}  // namespace aiscale::decide
