#include "fakes/openapi_validator.h"

#include <cmath>

namespace aiscale::testing {
namespace {

using nlohmann::json;

// `o[k]` without a copy, or null.
const json& Get(const json& o, const char* k) {
  static const json kNull;
  if (!o.is_object()) return kNull;
  const auto it = o.find(k);
  return it == o.end() ? kNull : *it;
}

// The JSON type name the API server prints for a value ("string", "integer", "number", ...).
std::string TypeOf(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::floor(d) == d ? "integer" : "number";
  }
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

bool TypeMatches(const std::string& want, const json& v) {
  const std::string got = TypeOf(v);
  if (want == got) return true;
  return want == "number" && got == "integer";
}

std::string Shown(const json& v) {
  std::string s = v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump();
  return s.size() > 60 ? s.substr(0, 60) + "..." : s;
}

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

void Validate(const json& schema, const json& v, const std::string& path,
              std::vector<std::string>& out);

void ValidateNumber(const json& schema, const json& v, const std::string& path,
                    std::vector<std::string>& out) {
  const double d = v.get<double>();
  if (schema.contains("minimum")) {
    const double min = schema["minimum"].get<double>();
    const bool excl = schema.value("exclusiveMinimum", false);
    if (excl ? !(d > min) : !(d >= min)) {
      out.push_back(path + ": Invalid value: " + v.dump() + ": " + path + " in body should be " +
                    (excl ? "greater than " : "greater than or equal to ") +
                    schema["minimum"].dump());
    }
  }
  if (schema.contains("maximum")) {
    const double max = schema["maximum"].get<double>();
    const bool excl = schema.value("exclusiveMaximum", false);
    if (excl ? !(d < max) : !(d <= max)) {
      out.push_back(path + ": Invalid value: " + v.dump() + ": " + path + " in body should be " +
                    (excl ? "less than " : "less than or equal to ") + schema["maximum"].dump());
    }
  }
}

void ValidateObject(const json& schema, const json& v, const std::string& path,
                    std::vector<std::string>& out) {
  const json& required = Get(schema, "required");
  for (const json& r : required.is_array() ? required : json::array()) {
    if (!v.contains(r.get<std::string>())) {
      out.push_back(Child(path, r.get<std::string>()) + ": Required value");
    }
  }
  const json& props = Get(schema, "properties");
  const json& extra = Get(schema, "additionalProperties");
  for (const auto& [k, child] : v.items()) {
    if (props.is_object() && props.contains(k)) {
      Validate(props[k], child, Child(path, k), out);
    } else if (extra.is_object()) {
      Validate(extra, child, Child(path, k), out);
    }
  }
}

void Validate(const json& schema, const json& v, const std::string& path,
              std::vector<std::string>& out) {
  if (!schema.is_object()) return;
  if (v.is_null()) {
    if (!schema.value("nullable", false) && schema.contains("type")) {
      out.push_back(path + ": Invalid value: \"null\": " + path + " in body must be of type " +
                    schema["type"].get<std::string>() + ": \"null\"");
    }
    return;
  }
  if (schema.value("x-kubernetes-int-or-string", false)) {
    if (TypeOf(v) != "integer" && !v.is_string()) {
      out.push_back(path + ": Invalid value: \"" + TypeOf(v) + "\": " + path +
                    " in body must be of type integer-or-string: \"" + TypeOf(v) + "\"");
    }
    return;
  }
  if (schema.contains("type") && !TypeMatches(schema["type"].get<std::string>(), v)) {
    out.push_back(path + ": Invalid value: \"" + TypeOf(v) + "\": " + path +
                  " in body must be of type " + schema["type"].get<std::string>() + ": \"" +
                  TypeOf(v) + "\"");
    return;
  }
  if (schema.contains("enum")) {
    bool found = false;
    std::string list;
    for (const json& e : schema["enum"]) {
      found = found || e == v;
      list += (list.empty() ? "" : ", ") + Shown(e);
    }
    if (!found)
      out.push_back(path + ": Unsupported value: " + Shown(v) + ": supported values: " + list);
  }
  if (v.is_number()) ValidateNumber(schema, v, path, out);
  if (v.is_string() && schema.contains("maxLength") &&
      v.get<std::string>().size() > schema["maxLength"].get<size_t>()) {
    out.push_back(path + ": Too long: may not be longer than " + schema["maxLength"].dump());
  }
  if (v.is_array()) {
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>()) {
      out.push_back(path + ": Too many: " + std::to_string(v.size()) + ": must have at most " +
                    schema["maxItems"].dump() + " items");
    }
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>()) {
      out.push_back(path + ": Invalid value: " + std::to_string(v.size()) + ": " + path +
                    " in body should have at least " + schema["minItems"].dump() + " items");
    }
    for (size_t i = 0; i < v.size(); ++i) {
      Validate(Get(schema, "items"), v[i], path + "[" + std::to_string(i) + "]", out);
    }
  }
  if (v.is_object()) ValidateObject(schema, v, path, out);
}

}  // namespace

std::vector<std::string> ValidateOpenApi(const json& schema, const json& value,
                                         const std::string& path) {
  std::vector<std::string> out;
  Validate(schema, value, path, out);
  return out;
}

std::vector<std::string> PruneUnknown(const json& schema, json& value, const std::string& path) {
  std::vector<std::string> out;
  if (!schema.is_object() || schema.value("x-kubernetes-preserve-unknown-fields", false))
    return out;
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      for (std::string& p :
           PruneUnknown(Get(schema, "items"), value[i], path + "[" + std::to_string(i) + "]")) {
        out.push_back(std::move(p));
      }
    }
    return out;
  }
  if (!value.is_object()) return out;
  const json& props = Get(schema, "properties");
  const json& extra = Get(schema, "additionalProperties");
  std::vector<std::string> drop;
  for (auto& [k, child] : value.items()) {
    const json* sub = props.is_object() && props.contains(k) ? &props[k]
                      : extra.is_object()                    ? &extra
                                                             : nullptr;
    if (!sub) {
      if (!(extra.is_boolean() && extra.get<bool>())) drop.push_back(k);
      continue;
    }
    for (std::string& p : PruneUnknown(*sub, child, Child(path, k))) out.push_back(std::move(p));
  }
  for (const std::string& k : drop) {
    value.erase(k);
    out.push_back(Child(path, k));
  }
  return out;
}

}  // namespace aiscale::testing
