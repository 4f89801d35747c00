#include "core/gpu_slots.h"

#include <algorithm>

namespace aiscale {

GpuSlots::GpuSlots(int count) : holders_(static_cast<size_t>(std::max(0, count))) {}

std::optional<std::vector<int>> GpuSlots::Acquire(const std::string& holder, int n,
                                                  const std::vector<int>& preferred) {
  if (n < 1 || holder.empty()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int> ids;
  auto take = [&](int id) {
    if (static_cast<int>(ids.size()) >= n || id < 0 || id >= count()) return;
    if (!holders_[static_cast<size_t>(id)].empty()) return;
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) return;
    ids.push_back(id);
  };
  for (int id : preferred) take(id);
  for (int id = 0; id < count(); ++id) take(id);
  if (static_cast<int>(ids.size()) < n) return std::nullopt;
  for (int id : ids) holders_[static_cast<size_t>(id)] = holder;
  std::sort(ids.begin(), ids.end());
  return ids;
}

int GpuSlots::Release(const std::string& holder, const std::vector<int>& ids) {
  std::lock_guard<std::mutex> lock(mu_);
  int released = 0;
  for (int id : ids) {
    if (id < 0 || id >= count() || holder.empty()) continue;
    std::string& h = holders_[static_cast<size_t>(id)];
    if (h != holder) continue;
    h.clear();
    ++released;
  }
  return released;
}

int GpuSlots::Free() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(std::count_if(holders_.begin(), holders_.end(),
                                        [](const std::string& h) { return h.empty(); }));
}

std::vector<std::string> GpuSlots::Holders() const {
  std::lock_guard<std::mutex> lock(mu_);
  return holders_;
}

std::string GpuSlots::Describe() const {
  const std::vector<std::string> holders = Holders();
  constexpr int kListed = 16;  // a detail line, not a dump: the rest are counted
  int free = 0;
  int listed = 0;
  std::string held;
  for (size_t id = 0; id < holders.size(); ++id) {
    if (holders[id].empty()) {
      ++free;
      continue;
    }
    if (listed++ >= kListed) continue;
    held += held.empty() ? "" : ", ";
    held += std::to_string(id);
    held += ' ';
    held += holders[id];
  }
  std::string out = std::to_string(free);
  out += " of ";
  out += std::to_string(holders.size());
  out += " GPU slots free";
  if (listed > kListed) {
    held += ", and ";
    held += std::to_string(listed - kListed);
    held += " more";
  }
  if (!held.empty()) out += " (held: " + held + ")";
  return out;
}

std::string FormatSlotIds(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) {
    if (!out.empty()) out += ',';
    out += std::to_string(id);
  }
  return out;
}

}  // namespace aiscale
