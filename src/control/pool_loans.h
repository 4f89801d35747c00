// PoolLoans: how long GPUs lent to an elastic workload stay with it before the pool takes them
// back, as measured on this pool. An elastic job weighs a growth onto lent GPUs against this
// figure: growing pays one restart now and, when the lender reclaims, another.
//
// The estimate is the mean lifetime of the last kKept loans. A loan still open counts at its
// age once it has outlived that mean; with none open, so does the time since the last loan
// ended (a loan started then would have lasted at least that long), so a lender that stopped
// reclaiming raises the figure even when no job borrows on the strength of it. One short or one
// long loan is one sample among several. Nothing closed yet: nullopt (no measure; the job sizes
// as if kept to its end). Expected is O(open loans): the Controller reads it once a tick. Pure;
// not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>

namespace aiscale::control {

class PoolLoans {
 public:
  static constexpr size_t kKept = 8;

  // `workload` grew on lent GPUs at t_s. A loan already open keeps its start.
  void Open(const std::string& workload, double t_s);
  // Its lent GPUs went back (reclaimed, or returned) at t_s: the lifetime is measured.
  void Close(const std::string& workload, double t_s);
  // The workload went away: its open loan is forgotten unmeasured.
  void Drop(const std::string& workload);
  bool IsOpen(const std::string& workload) const;
  std::optional<double> Expected(double now_s) const;

 private:
  std::map<std::string, double> open_;  // workload -> when its loan started
  std::deque<double> closed_;           // lifetimes, newest last
  double last_close_s_ = 0;             // when the newest of them ended
};

}  // namespace aiscale::control
