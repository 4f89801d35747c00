// The AIScaler CustomResourceDefinition (aiscalers.aiscale.dev, v1alpha1), generated from the
// workload readers themselves: `aiscale crd` prints it; deploy/06-aiscaler-crd.yaml is that
// output, and tests/deploy/crd_test.cc fails when the two differ.
//
// How: every sample workload below is read by ParseWorkloadEntry with a SchemaRecorder
// attached; what the readers recorded (types, bounds, enums, required fields, the keys each
// map allows) becomes the OpenAPI v3 schema of `spec`, with scaleTargetRef in place of the
// file's name, namespace and target. A key a reader allows but no sample made it read is an
// error here (add a sample), and so are two readers disagreeing on a field's type, so the
// schema cannot silently fall behind the readers. The status schema, printer columns
// (kubectl get: REFERENCE, TARGETS, MIN, MAX, REPLICAS, AGE) and names are stated here.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config/schema_recorder.h"
#include "core/result.h"

namespace aiscale::cli {

// The comment deploy/06-aiscaler-crd.yaml starts with.
inline constexpr const char* kCrdHeader =
    "The AIScaler CustomResourceDefinition, generated from aiscale's own workload readers\n"
    "(src/cli/aiscaler_crd.cc). Do not edit: regenerate with\n"
    "  aiscale crd > deploy/06-aiscaler-crd.yaml\n"
    "tests/deploy/crd_test.cc fails when this file and the readers differ. docs/kubernetes.md\n"
    "describes the fields, the status and the annotations.";

// What the workload readers accept, over the sample corpus (paths relative to a workload).
Result<std::map<std::string, config::FieldSchema>> RecordWorkloadSchema();
// The CRD as JSON (apiextensions.k8s.io/v1).
Result<nlohmann::json> AiScalerCrd();
// A JSON document as YAML, keys in order, strings quoted where a plain scalar would read as
// something else: what `aiscale crd` prints.
std::string ToYaml(const nlohmann::json& doc, const std::string& header_comment);

}  // namespace aiscale::cli
