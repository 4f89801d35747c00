#include "core/decision_codec.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_pull.h"
#include "core/varint.h"

namespace aiscale {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// nlohmann writes NaN as null, so null reads back as NaN.
double NumberOrNaN(const nlohmann::json& v) { return v.is_number() ? v.get<double>() : kNaN; }

}  // namespace

Result<SignalStatus> SignalStatusFromName(std::string_view name) {
  for (SignalStatus s :
       {SignalStatus::kOk, SignalStatus::kMissing, SignalStatus::kStale, SignalStatus::kInvalid,
        SignalStatus::kFetchFailed, SignalStatus::kPartial}) {
    if (SignalStatusName(s) == name) return s;
  }
  return Status::Error("unknown signal status '" + std::string(name) + "'");
}

Result<Action> ActionFromName(std::string_view name) {
  for (Action a : {Action::kNone, Action::kScaled, Action::kFailed}) {
    if (ActionName(a) == name) return a;
  }
  return Status::Error("unknown action '" + std::string(name) + "'");
}

Result<StatusCode> StatusCodeFromName(std::string_view name) {
  for (StatusCode c :
       {StatusCode::kOk, StatusCode::kNotFound, StatusCode::kConflict, StatusCode::kUnavailable,
        StatusCode::kDeadlineExceeded, StatusCode::kInvalid, StatusCode::kPermissionDenied,
        StatusCode::kInternal}) {
    if (StatusCodeName(c) == name) return c;
  }
  return Status::Invalid("unknown status code '" + std::string(name) + "'");
}

Result<Decision> DecisionFromJson(const nlohmann::json& j) {
  // nlohmann's typed access throws on a type mismatch; keep that inside this function.
  try {
    if (!j.is_object()) return Status::Error("unable to decode decision: not a JSON object");
    Decision d;
    d.workload = j.at("workload").get<std::string>();
    d.policy = j.at("policy").get<std::string>();
    d.at = TimePoint(Duration(std::llround(j.at("t_s").get<double>() * 1e9)));
    if (j.contains("wall_s")) {
      d.wall = WallTime(Duration(std::llround(j.at("wall_s").get<double>() * 1e9)));
    }
    d.current = j.at("current").get<int>();
    d.ready = j.at("ready").get<int>();
    for (const auto& in : j.at("inputs")) {
      SignalInput s;
      s.name = in.at("name").get<std::string>();
      ASSIGN_OR_RETURN(s.status, SignalStatusFromName(in.at("status").get<std::string>()));
      if (in.contains("value")) s.value = NumberOrNaN(in["value"]);
      if (in.contains("sum")) s.sum = NumberOrNaN(in["sum"]);
      if (in.contains("instances")) s.instances = in["instances"].get<int>();
      if (in.contains("detail")) s.detail = in["detail"].get<std::string>();
      d.inputs.push_back(std::move(s));
    }
    d.recommendation.desired = j.at("recommended").get<int>();
    d.recommendation.valid = j.at("valid").get<bool>();
    d.recommendation.rule = j.at("rule").get<std::string>();
    d.recommendation.reason = j.at("reason").get<std::string>();
    for (const auto& [k, v] : j.at("facts").items()) {
      d.recommendation.facts.emplace_back(k, NumberOrNaN(v));
    }
    d.stabilized = j.at("stabilized").get<int>();
    d.stabilize_reason = j.at("stabilize_reason").get<std::string>();
    d.constrained = j.at("constrained").get<int>();
    d.constrain_reason = j.at("constrain_reason").get<std::string>();
    ASSIGN_OR_RETURN(d.action, ActionFromName(j.at("action").get<std::string>()));
    d.action_detail = j.at("action_detail").get<std::string>();
    if (j.contains("engine_detail")) d.engine_detail = j["engine_detail"].get<std::string>();
    if (j.contains("asleep")) d.asleep = j["asleep"].get<int>();
    if (j.contains("asleep_wanted")) d.recommendation.asleep = j["asleep_wanted"].get<int>();
    if (j.contains("pool")) {
      const auto& p = j["pool"];
      d.pool = {true,
                p.at("wanted").get<int>(),
                p.at("granted").get<int>(),
                p.at("tenant").get<std::string>(),
                p.at("reason").get<std::string>(),
                p.at("detail").get<std::string>()};
    }
    if (j.contains("action_code")) {
      ASSIGN_OR_RETURN(d.action_code, StatusCodeFromName(j["action_code"].get<std::string>()));
    }
    if (j.contains("unchanged_ticks")) {
      d.unchanged_ticks = j["unchanged_ticks"].get<int>();
      d.unchanged_for = Duration(std::llround(j.at("unchanged_for_s").get<double>() * 1e9));
    }
    return d;
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(std::string("unable to decode decision: ") + e.what());
  }
}

nlohmann::json StateToJson(const PersistentState& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, vec] : s.values) {
    nlohmann::json arr = nlohmann::json::array();
    for (double v : vec) {
      if (std::isfinite(v)) {
        arr.push_back(v);
      } else if (std::isnan(v)) {
        arr.push_back("NaN");
      } else {
        arr.push_back(v > 0 ? "Infinity" : "-Infinity");
      }
    }
    j[k] = std::move(arr);
  }
  return j;
}

Result<PersistentState> StateFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::Error("unable to decode state: not a JSON object");
  PersistentState s;
  for (const auto& [k, arr] : j.items()) {
    if (!arr.is_array()) {
      return Status::Error("unable to decode state: '" + k + "' is not an array");
    }
    std::vector<double>& vec = s.values[k];
    vec.reserve(arr.size());
    for (const auto& v : arr) {
      if (v.is_number() || v.is_null()) {
        vec.push_back(NumberOrNaN(v));
      } else if (v == "NaN") {
        vec.push_back(kNaN);
      } else if (v == "Infinity" || v == "-Infinity") {
        const double inf = std::numeric_limits<double>::infinity();
        vec.push_back(v == "Infinity" ? inf : -inf);
      } else {
        return Status::Error("unable to decode state: '" + k + "' holds a non-number");
      }
    }
  }
  return s;
}

namespace {

Result<SignalInput> InputFromCompact(const nlohmann::json& a) {
  SignalInput in;
  in.name = a.at(0).get<std::string>();
  ASSIGN_OR_RETURN(in.status, SignalStatusFromName(a.at(1).get<std::string>()));
  size_t next = 2;
  if (HasValues(in.status)) {
    in.value = NumberOrNaN(a.at(2));
    in.sum = NumberOrNaN(a.at(3));
    in.instances = a.at(4).get<int>();
    next = 5;
  }
  if (a.size() > next) in.detail = a.at(next).get<std::string>();
  return in;
}

std::string GetText(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? std::string() : it->get<std::string>();
}
int GetInt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? 0 : it->get<int>();
}

// A JSON writer for the compact form, appending to one string: the Store encodes thousands of
// decisions a tick and building an nlohmann tree for each cost more than the rest of the write.
class CompactWriter {
 public:
  explicit CompactWriter(std::string& o) : out(o) {}
  std::string& out;

  void Key(const char* k) {
    out += first_ ? '{' : ',';
    first_ = false;
    out += '"';
    out += k;
    out += "\":";
  }
  void Int(int64_t v) {
    char buf[24];
    out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  }
  // Shortest text that reads back as the same double; non-finite as null (read as NaN), as
  // nlohmann writes them.
  void Number(double v) {
    if (!std::isfinite(v)) {
      out += "null";
      return;
    }
    char buf[32];
    out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  }
  // Escapes what JSON requires; bytes that are not valid UTF-8 become U+FFFD, as nlohmann's
  // replace handler does, so no name or message can make a row unreadable.
  void Text(std::string_view s) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
      // Runs of bytes that need no escaping (nearly all of a reason or a name) go in one append.
      const size_t plain = PlainRun(s, i);
      if (plain > 0) {
        out.append(s.data() + i, plain);
        i += plain;
        continue;
      }
      const auto c = static_cast<unsigned char>(s[i]);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      } else if (c >= 0x80) {
        const size_t n = Utf8Length(s.substr(i));
        if (n == 0) {
          out += "\xEF\xBF\xBD";
          ++i;
          continue;
        }
        out.append(s.substr(i, n));
        i += n;
        continue;
      } else {
        out += static_cast<char>(c);
      }
      ++i;
    }
    out += '"';
  }
  void Close() { out += first_ ? "{}" : "}"; }

 private:
  // Bytes written as they are: printable ASCII (and DEL) other than '"' and '\\'.
  static constexpr std::array<bool, 256> kPlain = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 0x80; ++c) plain[static_cast<size_t>(c)] = c != '"' && c != '\\';
    return plain;
  }();
  // How many bytes from s[i] on are plain.
  static size_t PlainRun(std::string_view s, size_t i) {
    size_t j = i;
    while (j < s.size() && kPlain[static_cast<unsigned char>(s[j])]) ++j;
    return j - i;
  }
  bool first_ = true;
};

void WriteInputs(CompactWriter& w, const std::vector<SignalInput>& inputs) {
  w.out += '[';
  for (size_t i = 0; i < inputs.size(); ++i) {
    const SignalInput& in = inputs[i];
    if (i > 0) w.out += ',';
    w.out += '[';
    w.Text(in.name);
    w.out += ',';
    w.Text(SignalStatusName(in.status));
    if (HasValues(in.status)) {
      w.out += ',';
      w.Number(in.value);
      w.out += ',';
      w.Number(in.sum);
      w.out += ',';
      w.Int(in.instances);
    }
    if (!in.detail.empty()) {
      w.out += ',';
      w.Text(in.detail);
    }
    w.out += ']';
  }
  w.out += ']';
}

void WriteFacts(CompactWriter& w, const std::vector<std::pair<std::string, double>>& facts) {
  w.out += '[';
  for (size_t i = 0; i < facts.size(); ++i) {
    if (i > 0) w.out += ',';
    w.out += '[';
    w.Text(facts[i].first);
    w.out += ',';
    w.Number(facts[i].second);
    w.out += ']';
  }
  w.out += ']';
}

}  // namespace

std::string DecisionToCompact(const Decision& d) {
  std::string out;
  out.reserve(512);
  DecisionToCompact(d, d.unchanged_ticks, d.unchanged_for, out);
  return out;
}

void DecisionToCompact(const Decision& d, int unchanged_ticks, Duration unchanged_for,
                       std::string& out) {
  out.clear();
  CompactWriter w(out);
  auto text = [&](const char* key, const std::string& s) {
    if (s.empty()) return;
    w.Key(key);
    w.Text(s);
  };
  auto integer = [&](const char* key, int64_t v) {
    w.Key(key);
    w.Int(v);
  };
  text("p", d.policy);
  if (d.wall.time_since_epoch().count() != 0) integer("ws", d.wall.time_since_epoch().count());
  integer("c", d.current);
  integer("r", d.ready);
  text("e", d.engine_detail);
  if (d.asleep > 0) integer("z", d.asleep);
  if (d.recommendation.asleep >= 0) integer("zw", d.recommendation.asleep);
  w.Key("i");
  WriteInputs(w, d.inputs);
  integer("d", d.recommendation.desired);
  if (!d.recommendation.valid) integer("v", 0);
  text("ru", d.recommendation.rule);
  text("re", d.recommendation.reason);
  if (!d.recommendation.facts.empty()) {
    w.Key("f");
    WriteFacts(w, d.recommendation.facts);
  }
  integer("s", d.stabilized);
  text("sr", d.stabilize_reason);
  integer("k", d.constrained);
  text("kr", d.constrain_reason);
  if (d.vetoed) integer("vt", 1);
  if (d.pool.active) {
    text("pt", d.pool.tenant);
    integer("pw", d.pool.wanted);
    integer("pg", d.pool.granted);
    text("pr", d.pool.reason);
    text("pd", d.pool.detail);
  }
  if (d.action != Action::kNone) text("a", std::string(ActionName(d.action)));
  if (d.action_code != StatusCode::kOk) text("ac", std::string(StatusCodeName(d.action_code)));
  text("ad", d.action_detail);
  if (unchanged_ticks > 0) {
    integer("u", unchanged_ticks);
    integer("uf", unchanged_for.count());
  }
  w.Close();
}

namespace {

// The fast path of DecisionFromCompact: a JsonPull over the shape CompactWriter writes, into the
// Decision with no document in between (a dashboard page decodes 17,280 of them, and the
// document was three quarters of its time). Anything it does not read exactly as the full
// parser would (a missing or repeated field, a float where an int goes, an unknown name) is
// nullopt, and the caller decodes with nlohmann and its errors instead.
bool ReadIntField(JsonPull& r, int& out) {
  int64_t v;
  if (!r.Int(v) || v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    return false;
  out = static_cast<int>(v);
  return true;
}

bool ReadInputs(JsonPull& r, std::vector<SignalInput>& out) {
  return r.Array([&] {
    SignalInput in;
    std::string status;
    if (!r.Take('[') || !r.String(in.name) || !r.Take(',') || !r.String(status)) return false;
    Result<SignalStatus> st = SignalStatusFromName(status);
    if (!st.ok()) return false;
    in.status = *st;
    if (HasValues(in.status)) {
      if (!r.Take(',') || !r.NumberOrNull(in.value) || !r.Take(',') || !r.NumberOrNull(in.sum) ||
          !r.Take(',') || !ReadIntField(r, in.instances)) {
        return false;
      }
    }
    if (r.Take(',') && !r.String(in.detail)) return false;
    if (!r.Take(']')) return false;
    out.push_back(std::move(in));
    return true;
  });
}

bool ReadFacts(JsonPull& r, std::vector<std::pair<std::string, double>>& out) {
  return r.Array([&] {
    std::pair<std::string, double> f;
    if (!r.Take('[') || !r.String(f.first) || !r.Take(',') || !r.NumberOrNull(f.second) ||
        !r.Take(']')) {
      return false;
    }
    out.push_back(std::move(f));
    return true;
  });
}

template <typename T, typename F>
bool ReadNamed(JsonPull& r, T& out, F from_name) {
  std::string name;
  if (!r.String(name)) return false;
  auto v = from_name(name);
  if (!v.ok()) return false;
  out = *v;
  return true;
}

// The fields of the compact form, in kCompactFields' order; each is a bit of a mask (a
// repeated one makes the text the full decoder's to read).
enum Field : size_t {
  kP,
  kWs,
  kUf,
  kC,
  kR,
  kE,
  kI,
  kD,
  kV,
  kRu,
  kRe,
  kF,
  kS,
  kSr,
  kK,
  kKr,
  kVt,
  kPw,
  kPg,
  kPt,
  kPr,
  kPd,
  kA,
  kAc,
  kAd,
  kU,
  kFieldCount
};
constexpr std::array<std::string_view, kFieldCount> kCompactFields = {
    "p",  "ws", "uf", "c",  "r",  "e",  "i",  "d",  "v",  "ru", "re", "f",  "s",
    "sr", "k",  "kr", "vt", "pw", "pg", "pt", "pr", "pd", "a",  "ac", "ad", "u"};

size_t FieldOf(std::string_view key) {
  for (size_t i = 0; i < kCompactFields.size(); ++i) {
    if (kCompactFields[i] == key) return i;
  }
  return kFieldCount;
}

// One field's value into d; `pool` gathers the pool's fields (set only when "pg" is there).
bool ReadField(JsonPull& r, size_t field, Decision& d, PoolOutcome& pool, int& valid) {
  int64_t v = 0;
  switch (field) {
    case kP:
      return r.String(d.policy);
    case kWs:
      return r.Int(v) && (d.wall = WallTime(Duration(v)), true);
    case kUf:
      return r.Int(v) && (d.unchanged_for = Duration(v), true);
    case kC:
      return ReadIntField(r, d.current);
    case kR:
      return ReadIntField(r, d.ready);
    case kE:
      return r.String(d.engine_detail);
    case kI:
      return ReadInputs(r, d.inputs);
    case kD:
      return ReadIntField(r, d.recommendation.desired);
    case kV:
      return ReadIntField(r, valid);
    case kRu:
      return r.String(d.recommendation.rule);
    case kRe:
      return r.String(d.recommendation.reason);
    case kF:
      return ReadFacts(r, d.recommendation.facts);
    case kS:
      return ReadIntField(r, d.stabilized);
    case kSr:
      return r.String(d.stabilize_reason);
    case kK:
      return ReadIntField(r, d.constrained);
    case kKr:
      return r.String(d.constrain_reason);
    case kVt: {
      int vt = 0;
      return ReadIntField(r, vt) && (d.vetoed = vt != 0, true);
    }
    case kPw:
      return ReadIntField(r, pool.wanted);
    case kPg:
      return ReadIntField(r, pool.granted);
    case kPt:
      return r.String(pool.tenant);
    case kPr:
      return r.String(pool.reason);
    case kPd:
      return r.String(pool.detail);
    case kA:
      return ReadNamed(r, d.action, ActionFromName);
    case kAc:
      return ReadNamed(r, d.action_code, StatusCodeFromName);
    case kAd:
      return r.String(d.action_detail);
    case kU:
      return ReadIntField(r, d.unchanged_ticks);
    default:
      return r.Skip();  // as the full decoder, a field it does not know is ignored
  }
}

std::optional<Decision> FastFromCompact(std::string_view text) {
  constexpr uint32_t kRequired = 1u << kC | 1u << kR | 1u << kI | 1u << kD | 1u << kS | 1u << kK;
  JsonPull r(text);
  Decision d;
  PoolOutcome pool;
  int valid = 1;
  uint32_t seen = 0;
  if (!r.Take('{') || r.Take('}')) return std::nullopt;
  std::string key;
  do {
    if (!r.String(key) || !r.Take(':')) return std::nullopt;
    const size_t field = FieldOf(key);
    const uint32_t bit = field < kFieldCount ? 1u << field : 0;
    if (seen & bit) return std::nullopt;
    seen |= bit;
    if (!ReadField(r, field, d, pool, valid)) return std::nullopt;
  } while (r.Take(','));
  if (!r.Take('}') || !r.AtEnd() || (seen & kRequired) != kRequired) return std::nullopt;
  d.recommendation.valid = valid != 0;
  if (seen & 1u << kPg) {
    pool.active = true;
    d.pool = std::move(pool);
  }
  return d;
}

}  // namespace

Result<Decision> DecisionFromCompact(std::string_view text, const std::string& workload,
                                     TimePoint at) {
  if (std::optional<Decision> d = FastFromCompact(text)) {
    d->workload = workload;
    d->at = at;
    return std::move(*d);
  }
  return DecisionFromCompactDocument(text, workload, at);
}

Result<Decision> DecisionFromCompactDocument(std::string_view text, const std::string& workload,
                                             TimePoint at) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Error("unable to decode decision: not a JSON object");
  try {
    Decision d;
    d.workload = workload;
    d.at = at;
    d.policy = GetText(j, "p");
    if (j.contains("ws")) d.wall = WallTime(Duration(j["ws"].get<int64_t>()));
    d.current = j.at("c").get<int>();
    d.ready = j.at("r").get<int>();
    d.engine_detail = GetText(j, "e");
    d.asleep = GetInt(j, "z");
    if (j.contains("zw")) d.recommendation.asleep = j["zw"].get<int>();
    for (const auto& a : j.at("i")) {
      ASSIGN_OR_RETURN(SignalInput in, InputFromCompact(a));
      d.inputs.push_back(std::move(in));
    }
    d.recommendation.desired = j.at("d").get<int>();
    d.recommendation.valid = !j.contains("v") || j["v"].get<int>() != 0;
    d.recommendation.rule = GetText(j, "ru");
    d.recommendation.reason = GetText(j, "re");
    if (j.contains("f")) {
      for (const auto& f : j["f"]) {
        d.recommendation.facts.emplace_back(f.at(0).get<std::string>(), NumberOrNaN(f.at(1)));
      }
    }
    d.stabilized = j.at("s").get<int>();
    d.stabilize_reason = GetText(j, "sr");
    d.constrained = j.at("k").get<int>();
    d.constrain_reason = GetText(j, "kr");
    d.vetoed = GetInt(j, "vt") != 0;
    if (j.contains("pg")) {
      d.pool = {true,
                GetInt(j, "pw"),
                GetInt(j, "pg"),
                GetText(j, "pt"),
                GetText(j, "pr"),
                GetText(j, "pd")};
    }
    if (j.contains("a")) {
      ASSIGN_OR_RETURN(d.action, ActionFromName(j["a"].get<std::string>()));
    }
    if (j.contains("ac")) {
      ASSIGN_OR_RETURN(d.action_code, StatusCodeFromName(j["ac"].get<std::string>()));
    }
    d.action_detail = GetText(j, "ad");
    d.unchanged_ticks = GetInt(j, "u");
    if (j.contains("uf")) d.unchanged_for = Duration(j["uf"].get<int64_t>());
    return d;
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(std::string("unable to decode decision: ") + e.what());
  }
}

void StateToBytes(const PersistentState& s, std::string& out) {
  out.clear();
  const std::string* prev = nullptr;
  for (const auto& [k, vec] : s.values) {
    // Keys come sorted and share prefixes ("tr.io_n1", "tr.io_size"): store what is new.
    size_t shared = 0;
    if (prev) {
      const size_t n = std::min(prev->size(), k.size());
      while (shared < n && (*prev)[shared] == k[shared]) ++shared;
    }
    PutVarint(out, shared);
    PutVarint(out, k.size() - shared);
    out.append(k, shared, std::string::npos);
    PutVarint(out, vec.size());
    out.append(reinterpret_cast<const char*>(vec.data()), vec.size() * sizeof(double));
    prev = &k;
  }
}

Result<PersistentState> StateFromBytes(std::string_view in) {
  PersistentState s;
  auto bad = [] {
    return Status::Error("unable to decode state: truncated or corrupt binary state");
  };
  std::string key;
  while (!in.empty()) {
    uint64_t shared = 0, rest = 0, count = 0;
    if (!GetVarint(in, shared) || !GetVarint(in, rest) || shared > key.size() || rest > in.size()) {
      return bad();
    }
    key.resize(static_cast<size_t>(shared));
    key.append(in.substr(0, static_cast<size_t>(rest)));
    in.remove_prefix(static_cast<size_t>(rest));
    // Checked by division: a corrupt count must not overflow the size or allocate past input.
    if (!GetVarint(in, count) || in.size() / sizeof(double) < count) return bad();
    std::vector<double> vec(static_cast<size_t>(count));
    if (count > 0) std::memcpy(vec.data(), in.data(), vec.size() * sizeof(double));
    in.remove_prefix(vec.size() * sizeof(double));
    s.values[key] = std::move(vec);
  }
  return s;
}

}  // namespace aiscale
