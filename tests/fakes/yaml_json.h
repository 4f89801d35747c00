// YamlToJson: a YAML document as the JSON the API server would get from `kubectl apply` of it
// (kubectl converts YAML to JSON the same way): plain scalars typed by YAML 1.2's core schema
// (true/false, null/~, integers, floats), quoted scalars strings. Test-only.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

namespace aiscale::testing {

inline nlohmann::json YamlScalarToJson(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: a string whatever it reads like
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(s, kInt)) return std::stoll(s);
  if (std::regex_match(s, kFloat)) return std::strtod(s.c_str(), nullptr);
  return s;
}

inline nlohmann::json YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : n) out[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : n) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar:
      return YamlScalarToJson(n);
    default:
      return nullptr;
  }
}

}  // namespace aiscale::testing
