#include "act/kubernetes_reflector.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace aiscale::act {
namespace {

// A query value, percent-encoded (a continue token is base64 and may hold '+', '/', '=').
std::string QueryEscape(const std::string& v) {
  std::string out;
  for (unsigned char c : v) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string MetaField(const nlohmann::json& object, const char* field) {
  const auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  const auto f = m->find(field);
  return f != m->end() && f->is_string() ? f->get<std::string>() : "";
}

// The hint a 404 on the collection deserves: the CRD is missing or serves another version.
std::string Hint(const Status& st) {
  if (st.IsNotFound()) {
    return " (is the CustomResourceDefinition installed and serving this version? "
           "kubectl apply -f deploy/06-aiscaler-crd.yaml)";
  }
  return "";
}

}  // namespace

std::string ObjectKey(const nlohmann::json& object) {
  const std::string name = MetaField(object, "name");
  if (name.empty()) return "";
  const std::string ns = MetaField(object, "namespace");
  return ns.empty() ? name : ns + "/" + name;
}

KubeReflector::KubeReflector(std::string collection, KubeClient& client, Clock& clock,
                             ReflectorOptions options, std::function<void()> on_change,
                             std::function<void(const std::string&)> log, Telemetry* telemetry)
    : collection_(std::move(collection)),
      client_(client),
      clock_(clock),
      options_(options),
      on_change_(std::move(on_change)),
      log_(std::move(log)),
      telemetry_(telemetry),
      rng_(options.seed ? options.seed : std::random_device{}()),
      backoff_(options.backoff_initial) {
  if (telemetry_) {
    telemetry_->DeclareCounter("aiscale_watch_lists_total",
                               "Lists of a watched collection (the first and every re-list).");
    telemetry_->DeclareCounter("aiscale_watch_restarts_total",
                               "Watches of a collection started again, by reason.");
    telemetry_->DeclareCounter("aiscale_watch_events_total",
                               "Watch events received, by collection and type.");
  }
}

void KubeReflector::Log(const std::string& line) {
  if (log_) log_(line);
}

void KubeReflector::Count(const char* what, const std::string& reason) {
  if (!telemetry_) return;
  if (reason.empty()) {
    telemetry_->Add(what, {{"collection", collection_}});
  } else {
    telemetry_->Add(what, {{"collection", collection_}, {"reason", reason}});
  }
}

std::string KubeReflector::resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rv_;
}

std::vector<ObjectChange> KubeReflector::TakeChanges() {
  std::map<std::string, std::optional<nlohmann::json>> taken;
  {
    std::lock_guard<std::mutex> lock(mu_);
    taken.swap(pending_);
    notified_ = false;
  }
  std::vector<ObjectChange> out;
  out.reserve(taken.size());
  for (auto& [key, object] : taken) out.push_back({key, std::move(object)});
  return out;
}

void KubeReflector::Queue(std::string key, std::optional<nlohmann::json> object) {
  pending_[std::move(key)] = std::move(object);
  notified_ = true;
}

void KubeReflector::Notify() {
  bool changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    changed = notified_;
  }
  if (changed && on_change_) on_change_();
}

void KubeReflector::Upsert(nlohmann::json object, const std::string& rv) {
  const std::string key = ObjectKey(object);
  std::lock_guard<std::mutex> lock(mu_);
  rv_ = rv;
  Seen& s = seen_[key];
  s.uid = MetaField(object, "uid");
  s.rv = rv;
  Queue(key, std::move(object));
}

void KubeReflector::Remove(const std::string& key, const std::string& rv) {
  std::lock_guard<std::mutex> lock(mu_);
  rv_ = rv;
  if (seen_.erase(key) > 0) Queue(key, std::nullopt);
}

Status KubeReflector::List() {
  ++lists_;
  Count("aiscale_watch_lists_total", "");
  std::map<std::string, Seen> listed;
  std::string cont, rv;
  do {
    std::string path = collection_ + "?limit=" + std::to_string(options_.page_size);
    if (!cont.empty()) path += "&continue=" + QueryEscape(cont);
    ASSIGN_OR_RETURN(nlohmann::json page, client_.Call("GET", path));
    const auto items = page.find("items");
    if (items == page.end() || !(items->is_array() || items->is_null())) {
      return Status::Invalid("unable to list " + collection_ + ": the answer has no items list");
    }
    // Every page of one list carries the version of its first page's snapshot; watching
    // from it replays whatever changed while the pages were read.
    if (rv.empty()) rv = MetaField(page, "resourceVersion");
    cont = MetaField(page, "continue");
    if (rv.empty()) {
      return Status::Invalid("unable to list " + collection_ + ": no metadata.resourceVersion");
    }
    if (items->is_null()) continue;
    std::lock_guard<std::mutex> lock(mu_);
    for (nlohmann::json& item : *items) {
      const std::string key = item.is_object() ? ObjectKey(item) : "";
      if (key.empty()) continue;  // no name: not an object the API server would store
      Seen s{MetaField(item, "uid"), MetaField(item, "resourceVersion")};
      const auto old = seen_.find(key);
      if (old == seen_.end() || old->second.uid != s.uid || old->second.rv != s.rv) {
        Queue(key, std::move(item));
      }
      listed[key] = std::move(s);
    }
  } while (!cont.empty() && !stop_);
  if (stop_) return Status::Unavailable("stopped");
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, s] : seen_) {
      if (!listed.count(key)) Queue(key, std::nullopt);
    }
    seen_ = std::move(listed);
    rv_ = rv;
  }
  Notify();
  return Status::Ok();
}

bool KubeReflector::Apply(const WatchEvent& e, WatchEnd& end) {
  if (telemetry_) {
    telemetry_->Add(
        "aiscale_watch_events_total",
        {{"collection", collection_}, {"type", std::string(WatchEventTypeName(e.type))}});
  }
  switch (e.type) {
    case WatchEventType::kAdded:
    case WatchEventType::kModified:
      Upsert(e.object, e.resource_version);
      return true;
    case WatchEventType::kDeleted:
      Remove(ObjectKey(e.object), e.resource_version);
      return true;
    case WatchEventType::kBookmark: {
      std::lock_guard<std::mutex> lock(mu_);
      rv_ = e.resource_version;
      return true;
    }
    case WatchEventType::kError: {
      const int code = e.object.value("code", 0);
      const std::string msg = e.object.value("message", std::string("no message"));
      if (code == 410) {
        Log("watch of " + collection_ + " expired (" + msg + "); listing again");
        Count("aiscale_watch_restarts_total", "expired");
        end = WatchEnd::kRelist;
      } else {
        Log("watch of " + collection_ + " ended with an error: HTTP " + std::to_string(code) +
            ": " + msg);
        Count("aiscale_watch_restarts_total", "error_event");
        end = WatchEnd::kBackoff;
      }
      return false;
    }
  }
  return true;
}

KubeReflector::WatchEnd KubeReflector::Watch() {
  const std::string rv = resource_version();
  const int64_t base = static_cast<int64_t>(std::max(1.0, ToSeconds(options_.watch_timeout)));
  const int64_t timeout_s = std::uniform_int_distribution<int64_t>(base, 2 * base - 1)(rng_);
  const std::string path = collection_ +
                           "?watch=1&allowWatchBookmarks=true&resourceVersion=" + QueryEscape(rv) +
                           "&timeoutSeconds=" + std::to_string(timeout_s);
  WatchStreamDecoder decoder(options_.max_event_bytes);
  std::vector<WatchEvent> events;
  WatchEnd end = WatchEnd::kRewatch;
  bool healthy = false;
  StreamHandler h;
  h.on_data = [&](std::string_view piece) {
    events.clear();
    const Status st = decoder.Feed(piece, events);
    for (const WatchEvent& e : events) {
      if (!Apply(e, end)) return false;
      healthy = true;
    }
    if (!events.empty()) Notify();
    if (!st.ok()) {
      Log("watch of " + collection_ + " sent an event that cannot be read (" + st.message() +
          "); listing again");
      Count("aiscale_watch_restarts_total", "unreadable");
      end = WatchEnd::kRelist;
      return false;
    }
    return !stop_;
  };
  h.cancelled = [this] { return stop_.load(); };
  Result<HttpResponse> r = client_.Stream(path, h, Seconds(static_cast<double>(timeout_s) + 30));
  if (healthy) backoff_ = options_.backoff_initial;
  watch_healthy_ = healthy;
  if (stop_) return WatchEnd::kRewatch;
  return Ended(r, rv, decoder.pending(), end, healthy);
}

KubeReflector::WatchEnd KubeReflector::Ended(const Result<HttpResponse>& r, const std::string& rv,
                                             size_t pending, WatchEnd end, bool healthy) {
  if (pending > 0 && end == WatchEnd::kRewatch) {
    // The version seen last is before the cut event: watching again from it replays it.
    Log("watch of " + collection_ + " cut mid-event (" + std::to_string(pending) + " bytes" +
        (r.ok() ? "" : ": " + r.status().message()) + "); watching again from resourceVersion " +
        resource_version());
    Count("aiscale_watch_restarts_total", "cut");
    return WatchEnd::kBackoff;
  }
  if (!r.ok()) {
    Log("watch of " + collection_ + " interrupted (" + r.status().message() +
        "); watching again from resourceVersion " + resource_version());
    Count("aiscale_watch_restarts_total", "transport");
    return WatchEnd::kBackoff;
  }
  if (r->status == 410) {
    Log("watch of " + collection_ + " from resourceVersion " + rv +
        " expired (410 Gone); listing again");
    Count("aiscale_watch_restarts_total", "expired");
    end = WatchEnd::kRelist;
  } else if (r->status < 200 || r->status >= 300) {
    const Status st = KubeApiError(r->status, r->body);
    Log("unable to watch " + collection_ + ": " + st.message() + Hint(st));
    Count("aiscale_watch_restarts_total", "http_error");
    return WatchEnd::kBackoff;
  }
  if (end == WatchEnd::kRelist) {
    // Refused at once after a list, again and again (a 410 storm): back off before the next.
    return healthy ? WatchEnd::kRelist : WatchEnd::kBackoffRelist;
  }
  if (end != WatchEnd::kRewatch) return end;
  backoff_ = options_.backoff_initial;  // the server ended it at timeoutSeconds: all is well
  watch_healthy_ = true;
  Count("aiscale_watch_restarts_total", "timeout");
  return WatchEnd::kRewatch;
}

void KubeReflector::Backoff() {
  const Duration d = backoff_;
  backoff_ = std::min(backoff_ * 2, options_.backoff_max);
  const Duration wait =
      d / 2 + Duration(std::uniform_int_distribution<int64_t>(0, d.count() / 2)(rng_));
  const TimePoint until = clock_.Now() + wait;
  while (!stop_ && clock_.Now() < until) {
    clock_.SleepUntil(std::min(until, clock_.Now() + Seconds(0.05)));
  }
}

void KubeReflector::Run() {
  bool need_list = true;
  int failures = 0;
  while (!stop_) {
    if (need_list) {
      const Status st = List();
      if (stop_) return;
      if (!st.ok()) {
        Log("unable to list " + collection_ + ": " + st.message() + Hint(st));
        ++failures;
        Backoff();
        continue;
      }
      if (failures > 0) {
        Log("listed " + collection_ + " after " + std::to_string(failures) + " failed attempt(s)");
        failures = 0;
      }
      synced_ = true;
      need_list = false;
      // The backoff is not reset here: a list that works followed by a watch that fails at
      // once (a 410 storm) must still slow down. A healthy watch resets it.
    }
    const WatchEnd end = Watch();
    if (watch_healthy_ && failures > 0) {
      Log("watch of " + collection_ + " restored after " + std::to_string(failures) +
          " failed attempt(s)");
      failures = 0;
    }
    switch (end) {
      case WatchEnd::kRewatch:
        break;
      case WatchEnd::kRelist:
        need_list = true;
        break;
      case WatchEnd::kBackoffRelist:
        need_list = true;
        ++failures;
        Backoff();
        break;
      case WatchEnd::kBackoff:
        ++failures;
        Backoff();
        break;
    }
  }
}

}  // namespace aiscale::act
