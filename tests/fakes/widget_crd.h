// A small namespaced custom resource (widgets.example.com/v1, with a status subresource and a
// schema that keeps whatever its spec holds), for tests of the generic watch and status code
// against FakeKubeApiServer. Test-only.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace aiscale::testing {

inline nlohmann::json WidgetCrd() {
  const nlohmann::json open = {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", "widgets.example.com"}}},
          {"spec",
           {{"group", "example.com"},
            {"scope", "Namespaced"},
            {"names", {{"kind", "Widget"}, {"plural", "widgets"}, {"singular", "widget"}}},
            {"versions",
             {{{"name", "v1"},
               {"served", true},
               {"storage", true},
               {"subresources", {{"status", nlohmann::json::object()}}},
               {"schema",
                {{"openAPIV3Schema",
                  {{"type", "object"}, {"properties", {{"spec", open}, {"status", open}}}}}}}}}}}}};
}

inline nlohmann::json Widget(const std::string& ns, const std::string& name, int size) {
  return {{"apiVersion", "example.com/v1"},
          {"kind", "Widget"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"size", size}}}};
}

inline const char* kWidgets = "/apis/example.com/v1/widgets";

}  // namespace aiscale::testing
