// SchemaRecorder: what the config readers accept, written down while they read. Every typed
// read (Int, Number, String, Enum, Bool, DurationSeconds, the Required variants), every
// CheckKnown and every Items/Entries of a ConfigNode whose ConfigErrors has a recorder attached
// adds what it checks at that field's path.
//
// Why: the readers are the project's typed schema (defaults and bounds beside each field, in
// one place). A schema written for someone else, the AIScaler CRD's OpenAPI v3 schema the API
// server enforces, is generated from what they record over a corpus of specs, so the two cannot
// drift: a field added to a reader and never read by the corpus is a field CheckKnown allows
// with no recorded type, which the generator refuses. Paths are relative to `root` with list
// indexes dropped ("policy.metrics[].target.value"). Not thread-safe; for tools and tests.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace aiscale::config {

struct Bounds;

enum class FieldType : int {
  kObject,
  kMap,
  kArray,
  kString,
  kInteger,
  kNumber,
  kBoolean,
  kDuration
};

struct FieldSchema {
  std::set<FieldType> types;  // more than one: readers disagree (or a field takes either)
  std::optional<double> min, max;
  bool min_exclusive = false;
  std::set<std::string> enum_values;  // every allowed value of every Enum read here
  bool required = false;
  // How often it was read as required, and (kObject) how often its keys were checked: a field
  // is required only where every read of its map required it (a policy's own required field
  // is not required of the other policies sharing `policy`).
  int required_reads = 0, object_reads = 0;
  std::set<std::string> known;      // kObject: the keys CheckKnown allowed, over every read
  std::set<std::string> fallbacks;  // the default values readers passed, as text
  // Numeric reads, and how many of them had a lower and an upper bound: the schema bounds a
  // field only where every reader does (the loosest reader decides; each reader still checks
  // its own).
  int numeric_reads = 0, min_reads = 0, max_reads = 0;
};

class SchemaRecorder {
 public:
  // Only paths under `root` ("spec" records "spec.x" as "x"; "" records everything).
  explicit SchemaRecorder(std::string root) : root_(std::move(root)) {}

  void Field(const std::string& path, FieldType type, const Bounds* bounds = nullptr,
             const std::string& fallback = "");
  void Enum(const std::string& path, const std::vector<std::string>& values);
  void Required(const std::string& path);
  void Known(const std::string& path, const std::vector<std::string>& keys);

  const std::map<std::string, FieldSchema>& fields() const { return fields_; }

 private:
  // The recorded entry for `path`, or null when it is outside root.
  FieldSchema* At(const std::string& path);

  std::string root_;
  std::map<std::string, FieldSchema> fields_;
};

}  // namespace aiscale::config
