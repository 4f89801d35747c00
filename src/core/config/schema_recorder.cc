#include "core/config/schema_recorder.h"

#include <algorithm>

#include "core/config/config_node.h"

namespace aiscale::config {
namespace {

// "spec.workloads[3].policy.metrics[0].target" -> "spec.workloads[].policy.metrics[].target"
std::string DropIndexes(const std::string& path) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    out += path[i];
    if (path[i] != '[') continue;
    while (i + 1 < path.size() && path[i + 1] != ']') ++i;
  }
  return out;
}

}  // namespace

FieldSchema* SchemaRecorder::At(const std::string& path) {
  std::string p = DropIndexes(path);
  if (!root_.empty()) {
    if (p == root_) {
      p = "";
    } else if (p.rfind(root_ + ".", 0) == 0) {
      p = p.substr(root_.size() + 1);
    } else {
      return nullptr;
    }
  }
  return &fields_[p];
}

void SchemaRecorder::Field(const std::string& path, FieldType type, const Bounds* bounds,
                           const std::string& fallback) {
  FieldSchema* f = At(path);
  if (!f) return;
  f->types.insert(type);
  const bool numeric =
      type == FieldType::kInteger || type == FieldType::kNumber || type == FieldType::kDuration;
  if (numeric) ++f->numeric_reads;
  if (numeric && bounds && bounds->min) {
    ++f->min_reads;
    if (!f->min || *bounds->min < *f->min) {
      f->min = bounds->min;
      f->min_exclusive = bounds->min_exclusive;
    } else if (*bounds->min == *f->min) {
      f->min_exclusive = f->min_exclusive && bounds->min_exclusive;
    }
  }
  if (numeric && bounds && bounds->max) {
    ++f->max_reads;
    if (!f->max || *bounds->max > *f->max) f->max = bounds->max;
  }
  if (!fallback.empty()) f->fallbacks.insert(fallback);
}

void SchemaRecorder::Enum(const std::string& path, const std::vector<std::string>& values) {
  FieldSchema* f = At(path);
  if (f) f->enum_values.insert(values.begin(), values.end());
}

void SchemaRecorder::Required(const std::string& path) {
  FieldSchema* f = At(path);
  if (!f) return;
  f->required = true;
  ++f->required_reads;
}

void SchemaRecorder::Known(const std::string& path, const std::vector<std::string>& keys) {
  FieldSchema* f = At(path);
  if (!f) return;
  f->types.insert(FieldType::kObject);
  ++f->object_reads;
  f->known.insert(keys.begin(), keys.end());
}

}  // namespace aiscale::config
