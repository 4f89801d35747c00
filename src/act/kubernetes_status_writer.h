// StatusWriter: writes the .status of custom objects (AIScalers) through their /status
// subresource, and posts Events on them, off the tick thread, at a bounded rate.
//
// Promises: what is queued for one object is coalesced (a newer status replaces one not yet
// written), so writes per round are at most the number of objects whose status changed. Each
// write is optimistic: a PUT carrying the object's last known metadata.resourceVersion; a 409
// re-reads the object once and writes again on its version; a second 409 (another writer is
// busy with it) leaves the status queued for the next round. A 404 (the object is gone) drops
// it. Writes and Events go out only while may_write() says so (the leader), at most `qps` per
// second together; queued work waits meanwhile. Thread-safety: Queue, QueueEvent, SetVersion
// from any thread; Run (or WriteQueued) on one.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "act/kubernetes_client.h"
#include "core/clock.h"
#include "core/telemetry.h"

namespace aiscale::act {

struct StatusWriterOptions {
  std::string api_prefix = "/apis/aiscale.dev/v1alpha1";  // the group/version's path
  std::string plural = "aiscalers";
  std::string api_version = "aiscale.dev/v1alpha1";
  std::string kind = "AIScaler";
  double qps = 20;                    // writes and Events together
  Duration retry_after = Seconds(5);  // a status left queued after a failure waits this long
};

class StatusWriter {
 public:
  // `log` gets one line per problem; `telemetry` may be null.
  StatusWriter(KubeClient& client, Clock& clock, StatusWriterOptions options,
               std::function<bool()> may_write, std::function<void(const std::string&)> log,
               Telemetry* telemetry = nullptr);

  // Queues `status` for object `key` ("namespace/name"), replacing one not yet written.
  void Queue(const std::string& key, nlohmann::json status);
  // Forgets anything queued for `key` and its version (the object was deleted).
  void Forget(const std::string& key);
  // The object's latest metadata.resourceVersion as the watch saw it.
  void SetVersion(const std::string& key, const std::string& resource_version);
  // Posts a core/v1 Event on the object (`type` Normal or Warning).
  void QueueEvent(const std::string& key, const std::string& uid, const std::string& type,
                  const std::string& reason, const std::string& message);

  // Writes everything queued now, within the rate; returns how many status writes succeeded.
  int WriteQueued();
  // WriteQueued in a loop until Stop().
  void Run();
  void Stop() { stop_ = true; }
  size_t queued() const;

 private:
  struct Pending {
    nlohmann::json status;
    TimePoint not_before{};
  };
  struct Event {
    std::string key, uid, type, reason, message;
  };
  enum class Outcome { kWritten, kRetry, kDrop };
  Outcome Write(const std::string& key, const nlohmann::json& status);
  Result<nlohmann::json> Put(const std::string& key, const nlohmann::json& status,
                             const std::string& rv);
  void Post(const Event& e);
  std::string ObjectPath(const std::string& key) const;
  // Waits for a token of the rate (false when stopped first).
  bool Token();
  void Count(const char* outcome);

  KubeClient& client_;
  Clock& clock_;
  StatusWriterOptions options_;
  std::function<bool()> may_write_;
  std::function<void(const std::string&)> log_;
  Telemetry* telemetry_;
  std::atomic<bool> stop_{false};
  double tokens_;
  TimePoint refilled_{};

  mutable std::mutex mu_;  // guards the three below
  std::map<std::string, Pending> pending_;
  std::map<std::string, std::string> versions_;
  std::vector<Event> events_;
};

}  // namespace aiscale::act
