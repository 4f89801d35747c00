// ManagedObjects: the engine objects aiscale scales, for a pool source that has to tell their
// pods from others' (act/kubernetes_pool_source.h). The config file's objects are fixed; the
// AIScaler watch's come and go, and it reports its whole set after each change.
//
// Promises: until a watch that is awaited has reported once, Read is Unavailable (counting its
// objects' pods as others' would make the pool look short, and the allocator would reclaim on
// that); version() changes exactly when the set does. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/result.h"
#include "core/spec.h"

namespace aiscale::act {

class ManagedObjects {
 public:
  // `fixed`: the config file's (namespace and name filled). `awaits_watch`: objects also come
  // from a watch, which has not reported yet.
  ManagedObjects(std::vector<EngineObject> fixed, bool awaits_watch);

  // The watch's whole current set, replacing the last one.
  void SetWatched(std::vector<EngineObject> watched);

  struct View {
    std::vector<EngineObject> objects;  // fixed, then watched
    uint64_t version = 0;
  };
  Result<View> Read() const;
  uint64_t version() const { return version_.load(); }

 private:
  mutable std::mutex mu_;
  std::vector<EngineObject> fixed_, watched_;  // watched_ sorted
  bool waiting_;
  std::atomic<uint64_t> version_{0};
};

}  // namespace aiscale::act
