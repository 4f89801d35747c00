#include "core/config/config_node.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include "core/bounded_file.h"
#include "core/config/schema_recorder.h"

#include "core/utf8.h"

namespace aiscale::config {

std::string ConfigError::ToString() const {
  std::ostringstream os;
  os << file << ":" << line << ":" << column << ": ";
  if (!path.empty()) os << path << ": ";
  os << message;
  return os.str();
}

void ConfigErrors::Add(ConfigError e) {
  const std::hash<std::string> h;
  const size_t key = h(e.message) ^ (h(e.path) * 31) ^ (h(e.file) * 131) ^
                     (static_cast<size_t>(e.line) << 20) ^ static_cast<size_t>(e.column);
  const auto [first, last] = by_hash_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    const ConfigError& o = errors_[it->second];
    if (o.line == e.line && o.column == e.column && o.file == e.file && o.path == e.path &&
        o.message == e.message) {
      return;
    }
  }
  by_hash_.emplace(key, errors_.size());
  errors_.push_back(std::move(e));
}

Status ConfigErrors::ToStatus() const {
  if (errors_.empty()) return Status::Ok();
  std::string msg;
  for (const auto& e : errors_) {
    if (!msg.empty()) msg += "\n";
    msg += e.ToString();
  }
  return Status::Error(msg);
}

ConfigNode::ConfigNode(YAML::Node node, std::string path, std::shared_ptr<const std::string> file,
                       ConfigErrors* errors, YAML::Mark fallback_mark)
    : node_(node.IsDefined() ? std::move(node) : YAML::Node(YAML::NodeType::Undefined)),
      mark_(node_.IsDefined() ? node_.Mark() : fallback_mark),
      path_(std::move(path)),
      file_(std::move(file)),
      errors_(errors) {}

std::string ConfigNode::ChildPath(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

ConfigError ConfigNode::MakeError(const YAML::Node& at, const std::string& path,
                                  const std::string& message) const {
  ConfigError e;
  e.file = file_ ? *file_ : "<config>";
  YAML::Mark m = at.IsDefined() ? at.Mark() : mark_;
  if (m.line < 0) m = mark_;
  e.line = m.line >= 0 ? m.line + 1 : 0;
  e.column = m.column >= 0 ? m.column + 1 : 0;
  // A message may echo a scalar from the file; an error must print (and encode as JSON) whatever
  // bytes that scalar held.
  e.path = ToValidUtf8(path);
  e.message = ToValidUtf8(message);
  return e;
}

bool ConfigNode::Has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

ConfigNode ConfigNode::Child(const std::string& key) const {
  if (!node_.IsMap())
    return ConfigNode(YAML::Node(YAML::NodeType::Undefined), ChildPath(key), file_, errors_, mark_);
  return ConfigNode(node_[key], ChildPath(key), file_, errors_, mark_);
}

std::vector<ConfigNode> ConfigNode::Items() const {
  if (errors_ && errors_->recorder()) errors_->recorder()->Field(path_, FieldType::kArray);
  std::vector<ConfigNode> out;
  if (!IsDefined()) return out;
  if (!node_.IsSequence()) {
    errors_->Add(MakeError(node_, path_, "must be a list"));
    return out;
  }
  for (size_t i = 0; i < node_.size(); ++i) {
    out.emplace_back(node_[i], path_ + "[" + std::to_string(i) + "]", file_, errors_);
  }
  return out;
}

std::vector<std::pair<std::string, ConfigNode>> ConfigNode::Entries() const {
  if (errors_ && errors_->recorder()) errors_->recorder()->Field(path_, FieldType::kMap);
  std::vector<std::pair<std::string, ConfigNode>> out;
  if (!IsDefined()) return out;
  if (!node_.IsMap()) {
    errors_->Add(MakeError(node_, path_, "must be a map"));
    return out;
  }
  for (const auto& kv : node_) {
    const std::string key = kv.first.as<std::string>();
    if (!IsValidUtf8(key)) {
      errors_->Add(MakeError(kv.first, ChildPath(key), "key is not valid UTF-8"));
      continue;
    }
    out.emplace_back(key, ConfigNode(kv.second, ChildPath(key), file_, errors_));
  }
  return out;
}

void ConfigNode::Record(const std::string& key, FieldType type, const Bounds* b, double fallback,
                        bool has_fallback) const {
  SchemaRecorder* r = errors_ ? errors_->recorder() : nullptr;
  if (!r) return;
  std::string text;
  if (has_fallback) {
    std::ostringstream os;
    os << fallback;
    text = os.str();
  }
  r->Field(ChildPath(key), type, b, text);
}

bool ConfigNode::CheckBounds(const std::string& key, double v, const Bounds& b) const {
  std::ostringstream os;
  if (b.min) {
    if (b.min_exclusive ? !(v > *b.min) : !(v >= *b.min)) {
      os << "must be " << (b.min_exclusive ? "> " : ">= ") << *b.min << ", got " << v;
      ErrorAt(key, os.str());
      return false;
    }
  }
  if (b.max && !(v <= *b.max)) {
    os << "must be <= " << *b.max << ", got " << v;
    ErrorAt(key, os.str());
    return false;
  }
  return true;
}

static bool ParseDouble(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

double ConfigNode::Number(const std::string& key, double fallback, Bounds b) const {
  Record(key, FieldType::kNumber, &b, fallback, true);
  if (!Has(key)) return fallback;
  const YAML::Node n = node_[key];
  double v = 0;
  if (!n.IsScalar() || !ParseDouble(n.Scalar(), v) || !std::isfinite(v)) {
    ErrorAt(key, "must be a finite number, got " +
                     (n.IsScalar() ? "'" + n.Scalar() + "'" : std::string("a non-scalar")));
    return fallback;
  }
  return CheckBounds(key, v, b) ? v : fallback;
}

int ConfigNode::Int(const std::string& key, int fallback, Bounds b) const {
  Record(key, FieldType::kInteger, &b, fallback, true);
  if (!Has(key)) return fallback;
  const YAML::Node n = node_[key];
  double v = 0;
  if (!n.IsScalar() || !ParseDouble(n.Scalar(), v) || v != std::floor(v)) {
    ErrorAt(key, "must be an integer, got " +
                     (n.IsScalar() ? "'" + n.Scalar() + "'" : std::string("a non-scalar")));
    return fallback;
  }
  if (std::abs(v) > kMaxConfigInt) {
    ErrorAt(key, "must be an integer within +/-2e9 (an int), got '" + n.Scalar() + "'");
    return fallback;
  }
  return CheckBounds(key, v, b) ? static_cast<int>(v) : fallback;
}

bool ConfigNode::Bool(const std::string& key, bool fallback) const {
  Record(key, FieldType::kBoolean);
  if (!Has(key)) return fallback;
  const YAML::Node n = node_[key];
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "True" || s == "yes") return true;
    if (s == "false" || s == "False" || s == "no") return false;
  }
  ErrorAt(key, "must be true or false");
  return fallback;
}

std::string ConfigNode::ResolvePath(const std::string& path) const {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute() || !file_ || file_->empty()) return path;
  return (fs::path(*file_).parent_path() / path).lexically_normal().string();
}

std::string ConfigNode::String(const std::string& key, const std::string& fallback) const {
  Record(key, FieldType::kString);
  if (!Has(key)) return fallback;
  const YAML::Node n = node_[key];
  if (!n.IsScalar()) {
    ErrorAt(key, "must be a string");
    return fallback;
  }
  // Names and labels end up in JSON reports, which cannot hold invalid UTF-8.
  if (!IsValidUtf8(n.Scalar())) {
    ErrorAt(key, "must be valid UTF-8 text");
    return fallback;
  }
  return n.Scalar();
}

std::string ConfigNode::Enum(const std::string& key, const std::string& fallback,
                             const std::vector<std::string>& allowed) const {
  if (errors_ && errors_->recorder()) errors_->recorder()->Enum(ChildPath(key), allowed);
  std::string v = String(key, fallback);
  for (const auto& a : allowed) {
    if (a == v) return v;
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  ErrorAt(key, "must be one of " + list + ", got '" + v + "'");
  return fallback;
}

double ConfigNode::DurationSeconds(const std::string& key, double fallback, Bounds b) const {
  Record(key, FieldType::kDuration, &b, fallback, true);
  if (!Has(key)) return fallback;
  const YAML::Node n = node_[key];
  if (!n.IsScalar()) {
    ErrorAt(key, "must be a duration like 30s, 5m or 1h");
    return fallback;
  }
  std::string s = n.Scalar();
  double mult = 1;
  auto ends = [&](const std::string& suf) {
    return s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends("ms")) {
    mult = 1e-3;
    s.resize(s.size() - 2);
  } else if (ends("s")) {
    s.pop_back();
  } else if (ends("m")) {
    mult = 60;
    s.pop_back();
  } else if (ends("h")) {
    mult = 3600;
    s.pop_back();
  } else if (ends("d")) {
    mult = 86400;
    s.pop_back();
  }
  double v = 0;
  if (!ParseDouble(s, v) || !std::isfinite(v)) {
    ErrorAt(key, "must be a duration like 30s, 5m or 1h, got '" + n.Scalar() + "'");
    return fallback;
  }
  v *= mult;
  if (!CheckBounds(key, v, b)) return fallback;
  // Every duration becomes int64 nanoseconds; past this it would wrap, and below 1 ns a
  // positive interval would round to 0 and loop forever.
  if (std::abs(v) > kMaxDurationSeconds) {
    std::ostringstream os;
    os << "must be at most " << kMaxDurationSeconds << " s (100 years), got " << v << " s";
    ErrorAt(key, os.str());
    return fallback;
  }
  if (v != 0 && std::abs(v) < kMinNonzeroDurationSeconds) {
    std::ostringstream os;
    os << "must be 0 or at least 1 microsecond (shorter rounds toward 0 ns), got " << v << " s";
    ErrorAt(key, os.str());
    return fallback;
  }
  return v;
}

double ConfigNode::RequiredNumber(const std::string& key, Bounds b) const {
  if (errors_ && errors_->recorder()) {
    errors_->recorder()->Required(ChildPath(key));
    Record(key, FieldType::kNumber, &b);
  }
  if (!Has(key)) {
    Error("missing required field '" + key + "'");
    return 0;
  }
  return Number(key, 0, b);
}

std::string ConfigNode::RequiredString(const std::string& key) const {
  if (errors_ && errors_->recorder()) {
    errors_->recorder()->Required(ChildPath(key));
    Record(key, FieldType::kString);
  }
  if (!Has(key)) {
    Error("missing required field '" + key + "'");
    return "";
  }
  return String(key, "");
}

void ConfigNode::CheckKnown(const std::vector<std::string>& known) const {
  if (errors_ && errors_->recorder()) errors_->recorder()->Known(path_, known);
  if (!node_.IsMap()) {
    if (IsDefined()) errors_->Add(MakeError(node_, path_, "must be a map"));
    return;
  }
  std::set<std::string> k(known.begin(), known.end());
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    if (!k.count(key)) {
      std::string list;
      for (const auto& a : known) list += (list.empty() ? "" : ", ") + a;
      errors_->Add(
          MakeError(kv.first, ChildPath(key), "unknown field '" + key + "' (known: " + list + ")"));
    }
  }
}

void ConfigNode::Error(const std::string& message) const {
  errors_->Add(MakeError(node_, path_, message));
}

void ConfigNode::ErrorAt(const std::string& key, const std::string& message) const {
  const YAML::Node at = node_.IsMap() ? node_[key] : YAML::Node();
  errors_->Add(MakeError(at, ChildPath(key), message));
}

namespace {

// Deeper than any real config (a scenario nests about 6 levels); past this a document is
// refused rather than walked.
constexpr int kMaxYamlDepth = 64;
// Aliases let a small file name a huge tree ("billion laughs"); the walk below stops here.
constexpr size_t kMaxYamlNodes = 1'000'000;

ConfigError ErrorAtMark(const std::string& file, const YAML::Mark& m, const std::string& path,
                        const std::string& message) {
  return ConfigError{file, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0, path,
                     message};
}

// Walks the whole document (iteratively: no recursion on hostile depth) and records every key
// that appears twice in one map, naming both lines, plus a depth past the limit. yaml-cpp keeps
// both pairs of a duplicated key and `node[key]` returns one of them, so without this one value
// would be silently dropped. The tree is finite and at most kMaxYamlNodes large: DocumentScan
// refused the rest before it was built.
void CheckStructure(const YAML::Node& root, const std::string& file, ConfigErrors& errors) {
  struct Item {
    YAML::Node node;
    std::string path;
    int depth;
  };
  std::vector<Item> todo{{root, "", 0}};
  while (!todo.empty()) {
    Item it = std::move(todo.back());
    todo.pop_back();
    if (!it.node.IsMap() && !it.node.IsSequence()) continue;
    if (it.depth >= kMaxYamlDepth) {
      const std::string path = it.path.size() > 60 ? it.path.substr(0, 60) + "..." : it.path;
      errors.Add(ErrorAtMark(file, it.node.Mark(), path,
                             "nested deeper than " + std::to_string(kMaxYamlDepth) + " levels"));
      return;
    }
    if (it.node.IsSequence()) {
      for (size_t i = 0; i < it.node.size(); ++i) {
        todo.push_back({it.node[i], it.path + "[" + std::to_string(i) + "]", it.depth + 1});
      }
      continue;
    }
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : it.node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "<non-scalar key>";
      const std::string path = it.path.empty() ? key : it.path + "." + key;
      const auto [first, inserted] = seen.emplace(key, kv.first.Mark());
      if (!inserted) {
        errors.Add(ErrorAtMark(file, kv.first.Mark(), path,
                               "duplicate key '" + key + "' (first at line " +
                                   std::to_string(first->second.line + 1) + ")"));
      }
      todo.push_back({kv.second, path, it.depth + 1});
    }
  }
}

// What yaml-cpp's event parser says about the first two documents of a YAML stream, before any
// tree is built: where each starts, how many nodes the first expands to once every alias is
// replaced by what it names (saturating past kMaxYamlNodes), and the first alias that names a
// node it lies inside. yaml-cpp builds such an alias into a cycle, which every later walk would
// follow until a depth limit, with a path and an error at each turn (found by the scenario
// fuzzer: 1.3 KB of input, 16,602 errors, 0.9 s).
// Why events and not YAML::LoadAll: Debian 12's yaml-cpp 0.7 LoadAll loops forever, allocating,
// on a stray flow indicator (a file holding only ","): its parser reports an empty document
// without consuming the token, again and again (fixed upstream in yaml-cpp PR 1319). Here at
// most two documents are read, and a second one starting where the first did is that stall.
class DocumentScan final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { Leaf(anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (open_.count(anchor) != 0) {
      if (!recursive_alias) recursive_alias = mark;
      return;
    }
    const auto it = sizes_.find(anchor);
    Count(it == sizes_.end() ? 1 : it->second);
  }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    Leaf(anchor);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(anchor);
  }
  void OnMapEnd() override { Close(); }

  std::vector<YAML::Mark> starts;
  size_t first_document_nodes = 0;  // saturates at kMaxYamlNodes + 1
  std::optional<YAML::Mark> recursive_alias;

 private:
  struct Frame {
    YAML::anchor_t anchor;
    size_t nodes;
  };
  void Count(size_t n) {
    size_t& total = stack_.empty() ? document_nodes_ : stack_.back().nodes;
    total = std::min(total + n, kMaxYamlNodes + 1);
    if (stack_.empty() && starts.size() == 1) first_document_nodes = total;
  }
  void Leaf(YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) sizes_[anchor] = 1;
    Count(1);
  }
  void Open(YAML::anchor_t anchor) {
    stack_.push_back({anchor, 1});
    if (anchor != YAML::NullAnchor) open_.insert(anchor);
  }
  void Close() {
    if (stack_.empty()) return;
    const Frame done = stack_.back();
    stack_.pop_back();
    if (done.anchor != YAML::NullAnchor) {
      open_.erase(done.anchor);
      sizes_[done.anchor] = done.nodes;
    }
    Count(done.nodes);
  }

  std::vector<Frame> stack_;
  std::unordered_set<YAML::anchor_t> open_;
  std::unordered_map<YAML::anchor_t, size_t> sizes_;
  size_t document_nodes_ = 0;
};

// The one document of text (Null when there is none); a second document or a token yaml-cpp
// cannot place is an error at its mark. Throws YAML::Exception on a syntax error.
std::optional<YAML::Node> LoadOneDocument(const std::string& text, const std::string& file,
                                          ConfigErrors& errors) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentScan events;
  while (events.starts.size() < 2 && parser.HandleNextDocument(events)) {
  }
  if (events.starts.size() == 2) {
    const YAML::Mark& second = events.starts[1];
    errors.Add(
        second.pos == events.starts[0].pos
            ? ErrorAtMark(file, second, "", "YAML syntax: unexpected token here")
            : ErrorAtMark(file, second, "",
                          "a second YAML document (after '---'); a file holds one document"));
    return std::nullopt;
  }
  if (events.recursive_alias) {
    errors.Add(ErrorAtMark(file, *events.recursive_alias, "",
                           "an alias inside the node its anchor names (a structure that contains "
                           "itself cannot be read)"));
    return std::nullopt;
  }
  if (events.first_document_nodes > kMaxYamlNodes) {
    errors.Add(ErrorAtMark(file, events.starts.empty() ? YAML::Mark() : events.starts[0], "",
                           "document expands (through aliases) to more than " +
                               std::to_string(kMaxYamlNodes) + " nodes"));
    return std::nullopt;
  }
  return YAML::Load(text);
}

}  // namespace

ConfigNode ParseConfig(const std::string& text, const std::string& file, ConfigErrors& errors) {
  auto name = std::make_shared<const std::string>(file);
  const auto undefined = [&] {
    return ConfigNode(YAML::Node(YAML::NodeType::Undefined), "", name, &errors);
  };
  try {
    // Not plain Load: it reads the first document and silently ignores the rest.
    const std::optional<YAML::Node> doc = LoadOneDocument(text, file, errors);
    if (!doc) return undefined();
    const YAML::Node& root = *doc;
    if (!root.IsMap()) {
      ConfigError e{file, 1, 1, "", "top level must be a map with apiVersion, kind and spec"};
      errors.Add(e);
      return undefined();
    }
    const size_t before = errors.size();
    CheckStructure(root, file, errors);
    if (errors.size() != before) return undefined();
    return ConfigNode(root, "", name, &errors);
  } catch (const YAML::DeepRecursion& ex) {
    errors.Add(ErrorAtMark(file, ex.mark, "",
                           "nested deeper than " + std::to_string(kMaxYamlDepth) + " levels"));
    return undefined();
  } catch (const YAML::Exception& ex) {
    errors.Add({file, ex.mark.line >= 0 ? ex.mark.line + 1 : 0,
                ex.mark.column >= 0 ? ex.mark.column + 1 : 0, "", "YAML syntax: " + ex.msg});
    return undefined();
  }
}

ConfigNode LoadConfigFile(const std::string& path, ConfigErrors& errors) {
  auto text = ReadBoundedFile(path, kConfigFileLimit);
  if (!text.ok()) {
    errors.Add({path, 0, 0, "", text.status().message()});
    return ConfigNode(YAML::Node(YAML::NodeType::Undefined), "",
                      std::make_shared<const std::string>(path), &errors);
  }
  return ParseConfig(*text, path, errors);
}

std::string CheckHeader(const ConfigNode& root, const std::vector<std::string>& allowed_kinds) {
  if (!root.IsDefined()) return "";
  const std::string api = root.RequiredString("apiVersion");
  if (root.Has("apiVersion") && api != kApiVersion) {
    root.ErrorAt("apiVersion", std::string("must be ") + kApiVersion + ", got '" + api + "'");
  }
  const std::string kind = root.RequiredString("kind");
  if (root.Has("kind")) {
    bool ok = false;
    for (const auto& k : allowed_kinds) ok = ok || k == kind;
    if (!ok) {
      std::string list;
      for (const auto& a : allowed_kinds) list += (list.empty() ? "" : ", ") + a;
      root.ErrorAt("kind", "must be one of " + list + ", got '" + kind + "'");
    }
  }
  return kind;
}

}  // namespace aiscale::config
