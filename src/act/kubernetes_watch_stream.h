// WatchStreamDecoder: turns the body of a Kubernetes watch (one JSON event per line, as the API
// server's JSON framer writes it: {"type": "ADDED", "object": {...}}) into events, however the
// bytes were cut into pieces on the way.
//
// Why apart from the watch loop: it is pure, so every way a stream can be wrong (an event split
// anywhere, malformed JSON, an unknown type, an event larger than the limit, a stream that ends
// mid-event) is a table test. After the first error the decoder stays failed: a watcher that
// saw a bad event cannot know what it missed, and re-lists. Not thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace aiscale::act {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
std::string_view WatchEventTypeName(WatchEventType t);

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  // The object (ADDED, MODIFIED, DELETED), an object carrying only metadata.resourceVersion
  // (BOOKMARK), or a meta/v1 Status (ERROR).
  nlohmann::json object;
  std::string resource_version;  // the object's metadata.resourceVersion; "" for ERROR
};

// One line of a watch body. Errors (kInvalid) say what is wrong: not JSON, no known type, an
// object without metadata.name or metadata.resourceVersion.
Result<WatchEvent> ParseWatchEvent(std::string_view line);

class WatchStreamDecoder {
 public:
  // An event longer than `max_event_bytes` is an error (the API server stores objects of at
  // most 1.5 MiB; etcd's default request limit).
  explicit WatchStreamDecoder(size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

  // Appends the events completed by `piece` to `out`; the first error is returned now and by
  // every later call.
  Status Feed(std::string_view piece, std::vector<WatchEvent>& out);
  // Bytes of an event begun and not yet ended: a stream that closes with pending() > 0 was cut
  // mid-event.
  size_t pending() const { return line_.size(); }
  const Status& error() const { return error_; }

 private:
  Status Line(std::vector<WatchEvent>& out);

  size_t max_event_bytes_;
  std::string line_;
  Status error_;
};

}  // namespace aiscale::act
