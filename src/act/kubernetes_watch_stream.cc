#include "act/kubernetes_watch_stream.h"

#include <algorithm>

#include "core/strict_json.h"

namespace aiscale::act {
namespace {

bool TypeFromName(const std::string& name, WatchEventType& out) {
  static const std::pair<const char*, WatchEventType> kTypes[] = {
      {"ADDED", WatchEventType::kAdded},     {"MODIFIED", WatchEventType::kModified},
      {"DELETED", WatchEventType::kDeleted}, {"BOOKMARK", WatchEventType::kBookmark},
      {"ERROR", WatchEventType::kError},
  };
  for (const auto& [n, t] : kTypes) {
    if (name == n) {
      out = t;
      return true;
    }
  }
  return false;
}

// metadata.`field` as a non-empty string, or "".
std::string MetaString(const nlohmann::json& object, const char* field) {
  const auto m = object.find("metadata");
  if (m == object.end() || !m->is_object()) return "";
  const auto f = m->find(field);
  return f != m->end() && f->is_string() ? f->get<std::string>() : "";
}

}  // namespace

std::string_view WatchEventTypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "?";
}

Result<WatchEvent> ParseWatchEvent(std::string_view line) {
  Result<nlohmann::json> j = ParseStrictJson(line);
  if (!j.ok()) return Status::Invalid("watch event is " + j.status().message());
  if (!j->is_object()) return Status::Invalid("watch event is not a JSON object");
  WatchEvent e;
  const auto type = j->find("type");
  if (type == j->end() || !type->is_string() || !TypeFromName(type->get<std::string>(), e.type)) {
    return Status::Invalid(
        "watch event has no known type (ADDED, MODIFIED, DELETED, BOOKMARK, "
        "ERROR)");
  }
  const auto object = j->find("object");
  if (object == j->end() || !object->is_object()) {
    return Status::Invalid("watch event " + type->get<std::string>() + " has no object");
  }
  e.object = std::move(*object);
  if (e.type == WatchEventType::kError) return e;
  e.resource_version = MetaString(e.object, "resourceVersion");
  if (e.resource_version.empty()) {
    return Status::Invalid("watch event " + type->get<std::string>() +
                           " has no metadata.resourceVersion");
  }
  if (e.type != WatchEventType::kBookmark && MetaString(e.object, "name").empty()) {
    return Status::Invalid("watch event " + type->get<std::string>() + " has no metadata.name");
  }
  return e;
}

Status WatchStreamDecoder::Line(std::vector<WatchEvent>& out) {
  const bool blank = std::all_of(line_.begin(), line_.end(),
                                 [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
  if (!blank) {
    Result<WatchEvent> e = ParseWatchEvent(line_);
    if (!e.ok()) return e.status();
    out.push_back(std::move(e).value());
  }
  line_.clear();
  return Status::Ok();
}

Status WatchStreamDecoder::Feed(std::string_view piece, std::vector<WatchEvent>& out) {
  if (!error_.ok()) return error_;
  while (!piece.empty()) {
    const size_t nl = piece.find('\n');
    const std::string_view part = piece.substr(0, nl);
    if (line_.size() + part.size() > max_event_bytes_) {
      error_ =
          Status::Invalid("watch event longer than " + std::to_string(max_event_bytes_) + " bytes");
      line_.clear();
      return error_;
    }
    line_.append(part);
    if (nl == std::string_view::npos) break;
    piece.remove_prefix(nl + 1);
    error_ = Line(out);
    if (!error_.ok()) return error_;
  }
  return Status::Ok();
}

}  // namespace aiscale::act
