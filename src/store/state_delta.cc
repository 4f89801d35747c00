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

void PutName(std::string& out, std::string_view name) {
  PutVarint(out, name.size());
  out += name;
}

void PutSet(std::string& out, std::string_view name, const std::vector<double>& b, const Edit& e) {
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

// Reads an image entry by entry. The image is this process's own encoding; should it ever not
// parse, the rest reads as absent.
class ImageCursor {
 public:
  explicit ImageCursor(std::string_view image) : in_(image), base_(image.data()) { Next(); }
  bool done() const { return done_; }
  std::string_view key() const { return key_; }
  size_t count() const { return count_; }
  const char* data() const { return data_; }
  size_t start() const { return start_; }  // where this entry begins in the image
  size_t offset() const { return static_cast<size_t>(data_ - base_); }  // of data()
  void Next() {
    start_ = static_cast<size_t>(in_.data() - base_);
    uint64_t len = 0, count = 0;
    if (in_.empty() || !GetVarint(in_, len) || len > in_.size()) {
      done_ = true;
      return;
    }
    key_ = in_.substr(0, static_cast<size_t>(len));
    in_.remove_prefix(static_cast<size_t>(len));
    if (!GetVarint(in_, count) || in_.size() / sizeof(double) < count) {
      done_ = true;
      return;
    }
    count_ = static_cast<size_t>(count);
    data_ = in_.data();
    in_.remove_prefix(count_ * sizeof(double));
  }

 private:
  std::string_view in_;
  const char* base_;
  std::string_view key_;
  size_t count_ = 0, start_ = 0;
  const char* data_ = nullptr;
  bool done_ = false;
};

void PutEntry(std::string& out, std::string_view key, const std::vector<double>& v) {
  PutVarint(out, key.size());
  out += key;
  PutVarint(out, v.size());
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

}  // namespace

void StateToImage(const PersistentState& s, std::string& image) {
  image.clear();
  for (const auto& [k, v] : s.values) PutEntry(image, k, v);
}

Result<PersistentState> StateFromImage(std::string_view image) {
  PersistentState s;
  size_t end = 0;
  for (ImageCursor a(image); !a.done(); a.Next()) {
    std::vector<double>& v = s.values[std::string(a.key())];
    v.resize(a.count());
    if (a.count() > 0) std::memcpy(v.data(), a.data(), a.count() * sizeof(double));
    end = a.offset() + a.count() * sizeof(double);
  }
  if (end != image.size()) return Status::Internal("a state image does not parse");
  return s;
}

// The image's keys and the map's are both in name order: one merge pass. Values that changed
// in place are written in place; from the first key or length that changed on, the rest of
// the image is written anew in the same pass.
bool TakeStateDelta(std::string& image, const PersistentState& next, std::string& out) {
  const size_t start = out.size();
  std::string fresh;  // the new image, once it no longer fits the old one's layout
  bool rebuilding = false;
  const auto rebuild_from = [&](size_t at) {
    if (rebuilding) return;
    rebuilding = true;
    fresh.reserve(image.size() + 64);
    fresh.assign(image, 0, at);
  };
  std::vector<double> last;  // a changed vector's old values (the image is not aligned)
  ImageCursor a(image);
  auto b = next.values.begin();
  while (!a.done() || b != next.values.end()) {
    // The key sets are nearly always the same: one equality test, then the order.
    if (!a.done() && b != next.values.end() && a.key() == b->first) {
      const std::vector<double>& v = b->second;
      const size_t bytes = v.size() * sizeof(double);
      const bool same_size = a.count() == v.size();
      if (!same_size || (bytes > 0 && std::memcmp(a.data(), v.data(), bytes) != 0)) {
        last.resize(a.count());
        if (a.count() > 0) std::memcpy(last.data(), a.data(), a.count() * sizeof(double));
        PutSet(out, b->first, v, BestEdit(last, v));
        if (!same_size) rebuild_from(a.start());
        if (!rebuilding) std::memcpy(image.data() + a.offset(), v.data(), bytes);
      }
      if (rebuilding) PutEntry(fresh, b->first, v);
      a.Next();
      ++b;
      continue;
    }
    if (b == next.values.end() || (!a.done() && a.key() < b->first)) {
      rebuild_from(a.start());
      PutName(out, a.key());
      PutVarint(out, kErase);
      a.Next();
      continue;
    }
    // b->first < a.key(): a key added.
    rebuild_from(a.done() ? image.size() : a.start());
    PutSet(out, b->first, b->second, Edit{0, 0, b->second.size()});
    PutEntry(fresh, b->first, b->second);
    ++b;
  }
  if (rebuilding) image.swap(fresh);
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
