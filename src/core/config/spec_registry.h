// SpecRegistry: an explicit name -> parser list for one kind of spec (metric sources by
// `type`, actuators by `engine`), the pattern of decide's PolicyRegistry (docs/architecture.md,
// practice 6).
//
// Why: what exists is readable in one list (monitor/source_registry.cc,
// act/actuator_registry.cc), duplicate names fail when the registry is built, and an unknown
// name is an error at its field that lists the known ones. A parser records every problem in
// the node's ConfigErrors and returns the typed spec (with its factory) or an error.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/result.h"

namespace aiscale::config {

template <typename Spec>
class SpecRegistry {
 public:
  using Parser = Result<Spec> (*)(const ConfigNode& node);
  struct Entry {
    std::string name;
    Parser parse;
  };

  // `field` is the key that selects the entry ("type", "engine").
  static Result<SpecRegistry> FromEntries(std::string field, std::vector<Entry> entries) {
    std::set<std::string> seen;
    for (const auto& e : entries) {
      if (!seen.insert(e.name).second) {
        return Status::Internal("duplicate " + field + " in registry: " + e.name);
      }
    }
    SpecRegistry r;
    r.field_ = std::move(field);
    r.entries_ = std::move(entries);
    return r;
  }

  Result<Spec> Parse(const ConfigNode& node) const {
    const std::string name = node.RequiredString(field_);
    for (const auto& e : entries_) {
      if (e.name == name) return e.parse(node);
    }
    if (node.Has(field_)) {
      node.ErrorAt(field_, "unknown " + field_ + " '" + name + "' (known: " + NameList() + ")");
    }
    return Status::Invalid("unknown " + field_ + " '" + name + "' at " + node.path());
  }

  std::string NameList() const {
    std::string list;
    for (const auto& e : entries_) list += (list.empty() ? "" : ", ") + e.name;
    return list;
  }

 private:
  std::string field_;
  std::vector<Entry> entries_;
};

}  // namespace aiscale::config
