// PositionCache: remembers, for each position in a batch, the key written there and a value
// for it (where the key's entry lives), so a writer that sends the same keys in the same order
// batch after batch (the Controller does, tick after tick) finds each entry by one compare of
// the key instead of a hash lookup: at 10,000 workloads those lookups, each a few cache misses
// into a large map, were a sixth of the store's time in a tick.
//
// A hint only: Find returns null when the position held another key, and the caller looks
// the key up and Remembers it. Values that point into a map must be dropped (Clear, Forget)
// before the entries they point to are erased.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace aiscale::store {

template <typename V>
class PositionCache {
 public:
  // The value remembered at `pos` for `key`, or null.
  V* Find(size_t pos, std::string_view key) {
    if (pos >= slots_.size() || !slots_[pos].set || slots_[pos].key != key) return nullptr;
    return &slots_[pos].value;
  }
  V& Remember(size_t pos, std::string_view key, V value) {
    if (pos >= slots_.size()) slots_.resize(pos + 1);
    Slot& s = slots_[pos];
    s.key.assign(key);
    s.value = std::move(value);
    s.set = true;
    return s.value;
  }
  void Clear() { slots_.clear(); }

 private:
  struct Slot {
    std::string key;
    V value{};
    bool set = false;
  };
  std::vector<Slot> slots_;
};

}  // namespace aiscale::store
