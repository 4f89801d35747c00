#include "core/steering.h"

#include <algorithm>
#include <charconv>
#include <ctime>

namespace aiscale {
namespace {

// The state layout's version, stored with it: a newer layout read by an older binary is an
// error, not a silently wrong override.
constexpr double kStateVersion = 1;

bool IsSet(WallTime t) { return t.time_since_epoch().count() != 0; }

std::string Int(int v) { return std::to_string(v); }

// "(the pipeline asked for N)" when the override changed it.
std::string Asked(int desired, int constrained) {
  if (desired == constrained) return "";
  std::string s = " (the pipeline asked for ";
  s += Int(constrained);
  s += ")";
  return s;
}

Result<WallTime> ParseRfc3339Utc(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fff]Z
  std::tm tm{};
  int parts[6] = {};
  const size_t starts[6] = {0, 5, 8, 11, 14, 17};
  const size_t lens[6] = {4, 2, 2, 2, 2, 2};
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':' ||
      (text.back() != 'Z' && text.back() != 'z')) {
    return Status::Invalid("");
  }
  for (int i = 0; i < 6; ++i) {
    const char* b = text.data() + starts[i];
    auto [p, ec] = std::from_chars(b, b + lens[i], parts[i]);
    if (ec != std::errc() || p != b + lens[i]) return Status::Invalid("");
  }
  Duration frac{};
  std::string_view rest = text.substr(19, text.size() - 20);
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2 || rest.size() > 10) return Status::Invalid("");
    long ns = 0;
    for (size_t i = 1; i < 10; ++i) {
      const char c = i < rest.size() ? rest[i] : '0';
      if (c < '0' || c > '9') return Status::Invalid("");
      ns = ns * 10 + (c - '0');
    }
    frac = Duration(ns);
  }
  if (parts[1] < 1 || parts[1] > 12 || parts[2] < 1 || parts[2] > 31 || parts[3] > 23 ||
      parts[4] > 59 || parts[5] > 60 || parts[0] < 1970 || parts[0] > 9999) {
    return Status::Invalid("");
  }
  tm.tm_year = parts[0] - 1900;
  tm.tm_mon = parts[1] - 1;
  tm.tm_mday = parts[2];
  tm.tm_hour = parts[3];
  tm.tm_min = parts[4];
  tm.tm_sec = parts[5];
  const time_t secs = timegm(&tm);
  return WallTime(std::chrono::seconds(secs)) + frac;
}

// "90s", "30m", "2h", "1d" as seconds; a negative value when the text is not one.
double ParseSpan(std::string_view text) {
  if (text.size() < 2 || text.size() > 12) return -1;
  double unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    default:
      return -1;
  }
  long n = 0;
  const char* b = text.data();
  const char* e = b + text.size() - 1;
  auto [p, ec] = std::from_chars(b, e, n);
  if (ec != std::errc() || p != e || n <= 0) return -1;
  return static_cast<double>(n) * unit;
}

}  // namespace

bool Steering::ActiveAt(WallTime now) const {
  return mode != SteerMode::kNone && (!IsSet(until) || now < until);
}

std::string Steering::Describe() const {
  if (mode == SteerMode::kNone) return "none";
  std::string s;
  if (mode == SteerMode::kPinned) {
    s = "pinned by ";
    s += SteerSourceName(source);
    s += " to ";
    s += Int(replicas);
  } else {
    s = "paused by ";
    s += SteerSourceName(source);
    if (direction == PauseDirection::kDown) s += " (scale-down only)";
    if (direction == PauseDirection::kUp) s += " (scale-up only)";
  }
  if (IsSet(since)) {
    s += " since ";
    s += FormatWallTime(since);
  }
  s += IsSet(until) ? " until " + FormatWallTime(until) : std::string(" until cleared");
  return s;
}

SteerResult Steer(const Steering& s, int current, int constrained, int min_replicas,
                  int max_replicas, WallTime now) {
  SteerResult r{constrained, false, ""};
  if (!s.ActiveAt(now)) return r;
  std::string why;
  if (s.mode == SteerMode::kPinned) {
    r.desired = std::clamp(s.replicas, min_replicas, std::max(min_replicas, max_replicas));
    if (r.desired != s.replicas) {
      why = "; the pin is outside the bounds " + Int(min_replicas) + ".." + Int(max_replicas) +
            ", so " + Int(r.desired);
    }
  } else if (s.direction == PauseDirection::kBoth) {
    r.desired = current;
  } else if (s.direction == PauseDirection::kDown) {
    r.desired = std::max(current, constrained);
  } else {
    r.desired = std::min(current, constrained);
  }
  r.held = r.desired != constrained;
  r.note = s.Describe() + ": " + (s.mode == SteerMode::kPinned ? "holds " : "stays at ") +
           Int(r.desired) + Asked(r.desired, constrained) + why;
  return r;
}

Status CheckPin(int replicas, int min_replicas, int max_replicas) {
  if (replicas >= min_replicas && replicas <= max_replicas) return Status::Ok();
  std::string msg = "cannot pin to " + Int(replicas) + " replicas: ";
  msg += replicas > max_replicas ? "above max_replicas " + Int(max_replicas)
                                 : "below min_replicas " + Int(min_replicas);
  msg += " (the workload's bounds are " + Int(min_replicas) + ".." + Int(max_replicas) + ")";
  return Status::Invalid(msg);
}

std::string_view PauseDirectionName(PauseDirection d) {
  switch (d) {
    case PauseDirection::kBoth:
      return "both";
    case PauseDirection::kDown:
      return "down";
    case PauseDirection::kUp:
      return "up";
  }
  return "both";
}

Result<PauseDirection> PauseDirectionFromName(std::string_view name) {
  for (PauseDirection d : {PauseDirection::kBoth, PauseDirection::kDown, PauseDirection::kUp}) {
    if (PauseDirectionName(d) == name) return d;
  }
  std::string shown(name.substr(0, 40));
  return Status::Invalid("unknown pause direction '" + shown + "': use both, down or up");
}

std::string_view SteerModeName(SteerMode m) {
  switch (m) {
    case SteerMode::kNone:
      return "none";
    case SteerMode::kPaused:
      return "paused";
    case SteerMode::kPinned:
      return "pinned";
  }
  return "none";
}

std::string_view SteerSourceName(SteerSource s) {
  return s == SteerSource::kAnnotation ? "annotation" : "API";
}

Result<WallTime> ParseUntil(std::string_view text, WallTime now) {
  std::string shown(text.substr(0, 64));
  const double span = ParseSpan(text);
  Result<WallTime> t = span > 0 ? Result<WallTime>(now + Seconds(span)) : ParseRfc3339Utc(text);
  if (!t.ok()) {
    return Status::Invalid("invalid time '" + shown +
                           "': use a duration (90s, 30m, 2h, 1d) or an RFC 3339 UTC time "
                           "(2026-12-03T05:30:00Z)");
  }
  if (*t <= now) {
    return Status::Invalid("time '" + shown + "' is not in the future (now " + FormatWallTime(now) +
                           ")");
  }
  return t;
}

PersistentState SteeringToState(const Steering& s) {
  PersistentState st;
  if (s.mode == SteerMode::kNone) return st;
  st.values["steer"] = {kStateVersion,
                        static_cast<double>(s.mode),
                        static_cast<double>(s.direction),
                        static_cast<double>(s.replicas),
                        static_cast<double>(s.source),
                        ToSeconds(s.since.time_since_epoch()),
                        ToSeconds(s.until.time_since_epoch())};
  return st;
}

Result<Steering> SteeringFromState(const PersistentState& st) {
  const std::vector<double>* v = st.FindVec("steer");
  if (!v) return Steering{};
  if (v->size() < 7 || (*v)[0] != kStateVersion || (*v)[1] < 0 || (*v)[1] > 2 || (*v)[2] < 0 ||
      (*v)[2] > 2 || (*v)[4] < 0 || (*v)[4] > 1) {
    return Status::Invalid("stored steering state has an unknown layout");
  }
  Steering s;
  s.mode = static_cast<SteerMode>(static_cast<int>((*v)[1]));
  s.direction = static_cast<PauseDirection>(static_cast<int>((*v)[2]));
  s.replicas = static_cast<int>((*v)[3]);
  s.source = static_cast<SteerSource>(static_cast<int>((*v)[4]));
  s.since = WallTime(Seconds((*v)[5]));
  s.until = WallTime(Seconds((*v)[6]));
  return s;
}

}  // namespace aiscale
