// ConfigNode: a YAML node that knows where it is (file, line, column, field path) and
// collects every error found while reading it, so `aiscale validate` can report them all.
//
// Why: config is parsed and validated once, at the edge (docs/architecture.md, practice 7). Each
// struct's `Parse(ConfigNode)` reads its fields with defaults beside them, calls CheckKnown() to
// reject unknown fields, and Validate()s cross-field rules; no half-valid object escapes because
// callers check ConfigErrors::empty() before using the result.
//
//   ConfigErrors errs;
//   auto root = LoadConfigFile("x.yaml", errs);          // parse errors land in errs
//   double c = root.Child("spec").Number("cooldown", 3600, AtLeast(0));
//   if (!errs.empty()) return errs.ToStatus();
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/result.h"

namespace aiscale::config {

class SchemaRecorder;  // schema_recorder.h
enum class FieldType : int;

struct ConfigError {
  std::string file;
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based
  std::string path;  // e.g. spec.workloads[0].policy.cooldown
  std::string message;
  // "file:line:column: path: message"
  std::string ToString() const;
};

class ConfigErrors {
 public:
  // An error identical to one already recorded (a field read by two checks) is kept once;
  // found by hash, so a file with 10^5 errors costs no 10^10 comparisons.
  void Add(ConfigError e);
  bool empty() const { return errors_.empty(); }
  size_t size() const { return errors_.size(); }
  const std::vector<ConfigError>& all() const { return errors_; }
  // One line per error; ok when there are none.
  Status ToStatus() const;
  // While set, every node sharing these errors records what it reads (schema_recorder.h).
  void set_recorder(SchemaRecorder* recorder) { recorder_ = recorder; }
  SchemaRecorder* recorder() const { return recorder_; }

 private:
  SchemaRecorder* recorder_ = nullptr;
  std::vector<ConfigError> errors_;
  std::unordered_multimap<size_t, size_t> by_hash_;  // an error's hash -> its index in errors_
};

struct Bounds {
  std::optional<double> min;
  std::optional<double> max;
  bool min_exclusive = false;  // "must be > min" rather than ">= min"
};
// Bounds factories; designated initializers would leave fields implicit.
inline Bounds AtLeast(double min) { return Bounds{min, std::nullopt, false}; }
inline Bounds Above(double min) { return Bounds{min, std::nullopt, true}; }
inline Bounds Between(double min, double max) { return Bounds{min, max, false}; }

// Limits every reader applies (docs/limits.md). A duration past kMaxDurationSeconds would wrap
// int64 nanoseconds somewhere downstream; one below kMinNonzeroDurationSeconds is a period
// that rounds toward 0 ns. Int() accepts only |v| <= kMaxConfigInt.
inline constexpr double kMaxDurationSeconds = 100.0 * 365 * 86400;
inline constexpr double kMinNonzeroDurationSeconds = 1e-6;
inline constexpr double kMaxConfigInt = 2e9;

class ConfigNode {
 public:
  // An undefined or invalid (yaml-cpp "zombie") node is normalized to a valid undefined one,
  // so every accessor is safe on absent fields; `fallback_mark` locates errors about it.
  ConfigNode(YAML::Node node, std::string path, std::shared_ptr<const std::string> file,
             ConfigErrors* errors, YAML::Mark fallback_mark = YAML::Mark::null_mark());

  bool IsDefined() const { return node_.IsDefined() && !node_.IsNull(); }
  bool IsMap() const { return node_.IsMap(); }
  bool IsSequence() const { return node_.IsSequence(); }
  bool Has(const std::string& key) const;
  const std::string& path() const { return path_; }
  const YAML::Node& raw() const { return node_; }

  // Child of a map (undefined node when absent; reading it then yields defaults).
  ConfigNode Child(const std::string& key) const;
  // Elements of a sequence; records an error if the node is defined and not a sequence.
  std::vector<ConfigNode> Items() const;
  // Key/value pairs of a map; records an error if defined and not a map.
  std::vector<std::pair<std::string, ConfigNode>> Entries() const;

  // Typed reads of a child field. Absent -> fallback. Wrong type or out of bounds -> error
  // recorded at that field, fallback returned.
  double Number(const std::string& key, double fallback, Bounds b = {}) const;
  int Int(const std::string& key, int fallback, Bounds b = {}) const;
  bool Bool(const std::string& key, bool fallback) const;
  // Invalid UTF-8 is an error (names and labels are written into JSON reports).
  std::string String(const std::string& key, const std::string& fallback) const;
  // A string that must be one of `allowed`.
  std::string Enum(const std::string& key, const std::string& fallback,
                   const std::vector<std::string>& allowed) const;
  // Seconds, as a number or a string with unit: "90", 90, "500ms", "30s", "5m", "2h", "1d".
  // Besides `b`, always within [1 us, 100 years] or exactly 0 (kMaxDurationSeconds).
  double DurationSeconds(const std::string& key, double fallback, Bounds b = {}) const;
  // Required variants: absent is an error.
  double RequiredNumber(const std::string& key, Bounds b = {}) const;
  std::string RequiredString(const std::string& key) const;

  // Records an error for every key of this map not in `known`.
  void CheckKnown(const std::vector<std::string>& known) const;
  // Records an error at this node (or at child `key` if given and present).
  void Error(const std::string& message) const;
  void ErrorAt(const std::string& key, const std::string& message) const;

  ConfigErrors* errors() const { return errors_; }
  // The file this node was read from (empty when parsed from text without a name); lets a
  // config resolve relative paths against its own directory.
  std::string file() const { return file_ ? *file_ : std::string(); }
  // `path` relative to the directory of that file (absolute, empty, or without a file: as is).
  std::string ResolvePath(const std::string& path) const;

 private:
  ConfigError MakeError(const YAML::Node& at, const std::string& path,
                        const std::string& message) const;
  std::string ChildPath(const std::string& key) const;
  bool CheckBounds(const std::string& key, double v, const Bounds& b) const;
  // Tells an attached SchemaRecorder what a read of `key` accepts.
  void Record(const std::string& key, FieldType type, const Bounds* b = nullptr,
              double fallback = 0, bool has_fallback = false) const;

  YAML::Node node_;
  YAML::Mark mark_;  // of this node, or of the nearest defined ancestor
  std::string path_;
  std::shared_ptr<const std::string> file_;
  ConfigErrors* errors_;
};

// Parses `text` (named `file` in errors). A YAML syntax error is recorded with its position and
// an undefined node is returned.
ConfigNode ParseConfig(const std::string& text, const std::string& file, ConfigErrors& errors);
// Reads and parses a file; an unreadable file is an error at line 0.
ConfigNode LoadConfigFile(const std::string& path, ConfigErrors& errors);
// Checks `apiVersion: aiscale.dev/v1alpha1` and `kind` in `allowed_kinds`; returns the kind.
std::string CheckHeader(const ConfigNode& root, const std::vector<std::string>& allowed_kinds);

inline constexpr const char* kApiVersion = "aiscale.dev/v1alpha1";

}  // namespace aiscale::config
