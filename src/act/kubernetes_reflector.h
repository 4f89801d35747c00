// KubeReflector: keeps a local view of one collection of Kubernetes objects (all AIScalers, or
// those of one namespace) current by list then watch, as client-go's Reflector does, and hands
// what changed to a consumer on another thread.
//
// Protocol: a paged list (limit, continue) gives every object and the collection's
// resourceVersion; a watch from that version (allowWatchBookmarks, timeoutSeconds) streams
// ADDED/MODIFIED/DELETED events and BOOKMARKs that move the version on. A stream that ends,
// is cut mid-event or fails in transport is watched again from the last version seen (nothing
// is missed: the server replays from there). 410 Gone (or an ERROR event with code 410, "too
// old resource version") and an event that cannot be read lead to a fresh list, whose result
// replaces the view: objects not in it are reported deleted. Failures back off exponentially
// with jitter up to backoff_max; a list or watch that succeeds resets the backoff.
//
// What is kept: per object only its uid and resourceVersion, so 10,000 objects cost little.
// Changes are coalesced per object (the latest state wins) until TakeChanges drains them.
// Thread-safety: Run on one thread; TakeChanges, Stop and the accessors from any.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "act/kubernetes_client.h"
#include "act/kubernetes_watch_stream.h"
#include "core/clock.h"
#include "core/telemetry.h"

namespace aiscale::act {

struct ReflectorOptions {
  Duration backoff_initial = Seconds(0.25);
  Duration backoff_max = Seconds(4);  // a restarted API server is found again within this
  // timeoutSeconds asked of each watch: a random value in [watch_timeout, 2 * watch_timeout),
  // so many watchers do not all re-watch at once (client-go's minWatchTimeout is 5 minutes).
  Duration watch_timeout = Seconds(300);
  size_t page_size = 500;                      // items per list page (client-go's default)
  size_t max_event_bytes = 4u * 1024u * 1024;  // one watch event; etcd stores <= 1.5 MiB
  unsigned seed = 0;                           // jitter; 0: from std::random_device
};

// One object that changed since the last TakeChanges: its latest state, or deleted.
struct ObjectChange {
  std::string key;                       // "namespace/name"
  std::optional<nlohmann::json> object;  // nullopt: deleted (or gone from a re-list)
};

class KubeReflector {
 public:
  // `collection` is the list path, e.g. "/apis/aiscale.dev/v1alpha1/aiscalers". `on_change` is
  // called (from Run's thread, no lock held) after changes were queued; `log` gets one line
  // per problem and recovery. `telemetry` may be null.
  KubeReflector(std::string collection, KubeClient& client, Clock& clock, ReflectorOptions options,
                std::function<void()> on_change, std::function<void(const std::string&)> log,
                Telemetry* telemetry = nullptr);

  // Lists and watches until Stop(); returns within about a second of it.
  void Run();
  void Stop() { stop_ = true; }
  // Every change queued since the last call, one per object, in key order.
  std::vector<ObjectChange> TakeChanges();
  // True once a list succeeded (the view is complete), false again while a re-list runs.
  bool synced() const { return synced_; }
  // How many lists ran (the first included), for tests and telemetry.
  int lists() const { return lists_; }
  std::string resource_version() const;
  const std::string& collection() const { return collection_; }

 private:
  enum class WatchEnd { kRewatch, kRelist, kBackoff, kBackoffRelist };
  Status List();
  WatchEnd Watch();
  // What follows a watch that ended with `r` (`pending` bytes of an unfinished event).
  WatchEnd Ended(const Result<HttpResponse>& r, const std::string& rv, size_t pending, WatchEnd end,
                 bool healthy);
  // Applies one event to the view; false when the stream must be given up (a re-list).
  bool Apply(const WatchEvent& e, WatchEnd& end);
  void Upsert(nlohmann::json object, const std::string& rv);
  void Remove(const std::string& key, const std::string& rv);
  void Queue(std::string key, std::optional<nlohmann::json> object);
  void Notify();
  // Sleeps the current backoff (interrupted by Stop) and doubles it.
  void Backoff();
  void Log(const std::string& line);
  void Count(const char* what, const std::string& reason);

  std::string collection_;
  KubeClient& client_;
  Clock& clock_;
  ReflectorOptions options_;
  std::function<void()> on_change_;
  std::function<void(const std::string&)> log_;
  Telemetry* telemetry_;
  std::mt19937 rng_;
  Duration backoff_;
  bool watch_healthy_ = false;  // the last watch delivered events or ended normally
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<int> lists_{0};

  mutable std::mutex mu_;  // guards everything below
  std::string rv_;         // the last resourceVersion seen
  struct Seen {
    std::string uid;
    std::string rv;
  };
  std::map<std::string, Seen> seen_;  // the view: key -> what was last delivered
  std::map<std::string, std::optional<nlohmann::json>> pending_;
  bool notified_ = false;  // pending_ changed since the consumer last drained
};

// "namespace/name" of an object (name alone when it has no namespace); "" without a name.
std::string ObjectKey(const nlohmann::json& object);

}  // namespace aiscale::act
