// ValidateOpenApi and PruneUnknown: a custom resource checked against its CRD's structural
// OpenAPI v3 schema as the API server checks it on create and update, for the keywords the
// AIScaler CRD uses: type, properties, required, items, additionalProperties, enum, minimum,
// maximum, exclusiveMinimum/Maximum, minItems, maxItems, maxLength, nullable,
// x-kubernetes-int-or-string and x-kubernetes-preserve-unknown-fields. Messages are worded as
// the API server's field errors ("spec.min_replicas: Invalid value: \"two\": spec.min_replicas
// in body must be of type integer: \"string\""). Test-only (the fake API server's), pure.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aiscale::testing {

// Every violation of `schema` by `value` at `path` ("spec"), in document order.
std::vector<std::string> ValidateOpenApi(const nlohmann::json& schema, const nlohmann::json& value,
                                         const std::string& path);
// Removes the fields `schema` does not declare (the API server prunes them unless the client
// asked for strict field validation) and returns their paths.
std::vector<std::string> PruneUnknown(const nlohmann::json& schema, nlohmann::json& value,
                                      const std::string& path);

}  // namespace aiscale::testing
