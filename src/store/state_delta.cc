#include "store/state_delta.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

namespace aiscale::store {
namespace {

constexpr uint64_t kErase = 0, kSet = 1;
// Shifts tried when a vector moved (a window that lost its oldest entries): at most this many
// leading values dropped, and this many candidate positions compared.
constexpr size_t kMaxDrop = 64, kMaxShiftTries = 8;

bool SameBits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool SameVector(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// b is written as: a without its first `drop` values, resized to b.size(), with b[first, last)
// written over it.
struct Edit {
  size_t drop = 0, first = 0, last = 0;
  size_t count() const { return last - first; }
};

Edit EditFor(const std::vector<double>& a, const std::vector<double>& b, size_t drop) {
  const double* base = a.data() + drop;
  const size_t base_n = a.size() - drop, n = b.size(), m = std::min(base_n, n);
  Edit e{drop, 0, 0};
  while (e.first < m && SameBits(base[e.first], b[e.first])) ++e.first;
  if (n > m) {
    e.last = n;  // values past the old end are new
  } else {
    e.last = m;
    while (e.last > e.first && SameBits(base[e.last - 1], b[e.last - 1])) --e.last;
  }
  return e;
}

// The cheapest edit among no shift and the few shifts that line a[drop] up with b[0].
Edit BestEdit(const std::vector<double>& a, const std::vector<double>& b) {
  Edit best = EditFor(a, b, 0);
  if (best.count() <= 4 || b.empty()) return best;
  size_t tries = 0;
  for (size_t d = 1; d < a.size() && d <= kMaxDrop && tries < kMaxShiftTries; ++d) {
    if (!SameBits(a[d], b[0])) continue;
    ++tries;
    const Edit e = EditFor(a, b, d);
    if (e.count() < best.count()) best = e;
  }
  return best;
}

// Makes a equal to b by the edit that describes b (the values outside [first, last) already
// match once `drop` values are gone), so only the changed range is copied.
void ApplyEdit(const Edit& e, const std::vector<double>& b, std::vector<double>& a) {
  a.erase(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(e.drop));
  a.resize(b.size());
  std::copy(b.begin() + static_cast<std::ptrdiff_t>(e.first),
            b.begin() + static_cast<std::ptrdiff_t>(e.last),
            a.begin() + static_cast<std::ptrdiff_t>(e.first));
}

void PutName(std::string& out, const std::string& name) {
  PutVarint(out, name.size());
  out += name;
}

void PutSet(std::string& out, const std::string& name, const std::vector<double>& b,
            const Edit& e) {
  PutName(out, name);
  PutVarint(out, kSet);
  PutVarint(out, e.drop);
  PutVarint(out, b.size());
  PutVarint(out, e.first);
  PutVarint(out, e.count());
  out.append(reinterpret_cast<const char*>(b.data() + e.first), e.count() * sizeof(double));
}

Status Corrupt(const char* what) {
  return Status::Error(std::string("unable to apply state delta: ") + what);
}

}  // namespace

size_t SnapshotBytes(const PersistentState& s) {
  size_t n = 0;
  for (const auto& [k, v] : s.values) n += k.size() + 3 + v.size() * sizeof(double);
  return n;
}

// Both maps are ordered by name: one merge pass.
bool TakeStateDelta(PersistentState& last, const PersistentState& next, std::string& out) {
  const size_t start = out.size();
  auto a = last.values.begin();
  auto b = next.values.begin();
  while (a != last.values.end() || b != next.values.end()) {
    // The key sets are nearly always the same: one equality test, then the order.
    if (a != last.values.end() && b != next.values.end() && a->first == b->first) {
      if (!SameVector(a->second, b->second)) {
        const Edit e = BestEdit(a->second, b->second);
        PutSet(out, b->first, b->second, e);
        ApplyEdit(e, b->second, a->second);
      }
      ++a;
      ++b;
      continue;
    }
    if (b == next.values.end() || (a != last.values.end() && a->first < b->first)) {
      PutName(out, a->first);
      PutVarint(out, kErase);
      a = last.values.erase(a);
      continue;
    }
    // b->first < a->first: a key added.
    PutSet(out, b->first, b->second, Edit{0, 0, b->second.size()});
    last.values.emplace_hint(a, b->first, b->second);
    ++b;
  }
  return out.size() != start;
}

Status ApplyStateDelta(std::string_view in, PersistentState& state) {
  while (!in.empty()) {
    uint64_t len = 0, tag = 0;
    if (!GetVarint(in, len) || len > in.size()) return Corrupt("truncated name");
    const std::string name(in.substr(0, static_cast<size_t>(len)));
    in.remove_prefix(static_cast<size_t>(len));
    if (!GetVarint(in, tag)) return Corrupt("truncated op");
    if (tag == kErase) {
      state.values.erase(name);
      continue;
    }
    if (tag != kSet) return Corrupt("unknown op");
    uint64_t drop = 0, size = 0, offset = 0, count = 0;
    if (!GetVarint(in, drop) || !GetVarint(in, size) || !GetVarint(in, offset) ||
        !GetVarint(in, count)) {
      return Corrupt("truncated op");
    }
    std::vector<double>& v = state.values[name];
    // Checked by division and subtraction: corrupt numbers must neither overflow nor make it
    // allocate more than the old vector plus what the input carries.
    if (drop > v.size() || in.size() / sizeof(double) < count || offset > size ||
        count > size - offset || size - count > v.size() - drop) {
      return Corrupt("op out of range");
    }
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(drop));
    v.resize(static_cast<size_t>(size));
    if (count > 0) {
      std::memcpy(v.data() + offset, in.data(), static_cast<size_t>(count) * sizeof(double));
    }
    in.remove_prefix(static_cast<size_t>(count) * sizeof(double));
  }
  return Status::Ok();
}

}  // namespace aiscale::store
