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
  f("tr.completed", t.completed);
}

// The keys of the layout before the packed one, as strings, built once, and their order in
// the map: a state written by an older aiscale is read through them once, then packed.
struct Layout {
  std::vector<std::string> keys;  // in Fields order
  std::vector<size_t> by_key;     // indices into keys, in key order
};

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

// The fields in Fields order; a field the vector does not reach keeps its default (a state
// saved before a field was added).
TrainingState Unpack(const std::vector<double>& v) {
  TrainingState t;
  size_t i = 0;
  Fields(t, [&](const char*, auto& field) {
    if (i < v.size()) field = static_cast<std::decay_t<decltype(field)>>(v[i]);
    ++i;
  });
  return t;
}

void Pack(const TrainingState& t, std::vector<double>& v) {
  v.resize(Keys().keys.size());
  size_t i = 0;
  Fields(t, [&](const char*, const auto& field) { v[i++] = static_cast<double>(field); });
}

// The keyed layout: one key per field (its first value; the default when missing or empty).
TrainingState LoadKeyed(const PersistentState& s) {
  const Layout& l = Keys();
  std::vector<double> v;
  Pack(TrainingState{}, v);  // the defaults
  auto it = s.values.lower_bound(l.keys[l.by_key.front()]);
  for (size_t j : l.by_key) {
    const std::string& key = l.keys[j];
    int order = -1;  // it->first against key, compared once per step
    while (it != s.values.end() && (order = it->first.compare(key)) < 0) ++it;
    if (it == s.values.end()) break;
    if (order == 0 && !it->second.empty()) v[j] = it->second.front();
  }
  return Unpack(v);
}

}  // namespace

TrainingState TrainingState::Load(const PersistentState& s) {
  if (const std::vector<double>* v = s.FindVec(TrainingStateSlots::kKey)) return Unpack(*v);
  return LoadKeyed(s);
}

void TrainingState::Save(PersistentState& s) const { TrainingStateSlots(s).Save(*this); }

TrainingStateSlots::TrainingStateSlots(PersistentState& s) {
  auto it = s.values.find(kKey);
  if (it != s.values.end()) {
    fields_ = &it->second;
    return;
  }
  // A new state, or one of the keyed layout: packed now, its keys erased.
  const TrainingState t = LoadKeyed(s);
  for (const std::string& key : Keys().keys) s.values.erase(key);
  fields_ = &s.Vec(kKey);
  Pack(t, *fields_);
}

TrainingState TrainingStateSlots::Load() const { return Unpack(*fields_); }

void TrainingStateSlots::Save(const TrainingState& t) const { Pack(t, *fields_); }

}  // namespace aiscale::decide
