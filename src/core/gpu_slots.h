// GpuSlots: the GPU slots of one machine (ids 0..count-1, the CUDA device ordinals), shared by
// every local-engine workload of a daemon, so that two replicas never run on the same GPU.
//
// Why a table of its own: the pool's allocator decides how many replicas each workload may have,
// but a shrink (checkpoint, SIGTERM, exit) takes seconds while the growth it makes room for is
// applied in the same tick. A replica therefore takes its slots when its process starts and
// gives them back only when its process is gone; one that finds too few free stays pending.
//
//   GpuSlots slots(4);
//   std::optional<std::vector<int>> ids = slots.Acquire("chat-0", 2);  // {0, 1}
//   ... start the process with CUDA_VISIBLE_DEVICES=FormatSlotIds(*ids) ...
//   slots.Release("chat-0", *ids);                                       // after it exited
//
// Thread-safe (one mutex, never held across anything but the table); never blocks.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace aiscale {

class GpuSlots {
 public:
  // `count` slots, all free; a negative count is taken as 0.
  explicit GpuSlots(int count);
  GpuSlots(const GpuSlots&) = delete;
  GpuSlots& operator=(const GpuSlots&) = delete;

  int count() const { return static_cast<int>(holders_.size()); }
  // Takes `n` free slots for `holder` ("chat-0"), the `preferred` ones first when free (a
  // restarted replica gets its devices back), then the lowest ids. All or nothing: nullopt when
  // fewer than `n` are free, or when n < 1 or `holder` is empty.
  std::optional<std::vector<int>> Acquire(const std::string& holder, int n,
                                          const std::vector<int>& preferred = {});
  // Gives back those of `ids` that `holder` holds; returns how many it gave back (a slot held by
  // another holder, or free, is left as it is: a double release cannot free someone's slot).
  int Release(const std::string& holder, const std::vector<int>& ids);
  int Free() const;
  // Who holds each slot ("" when free), by id.
  std::vector<std::string> Holders() const;
  // "1 of 4 GPU slots free (held: 0 chat-0, 1 chat-0, 3 bert-1)", for a pending replica's detail
  // (the first 16 held slots named, the rest counted).
  std::string Describe() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> holders_;  // by slot id; "" when free
};

// Slot ids as CUDA_VISIBLE_DEVICES takes them: "0,1,3".
std::string FormatSlotIds(const std::vector<int>& ids);

}  // namespace aiscale
