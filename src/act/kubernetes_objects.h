// Reading Kubernetes API objects as the API server returns them (JSON): a field by dotted path,
// a whole-device resource quantity, the GPUs (nvidia.com/gpu) a pod spec asks for, and whether
// a node takes pods. Shared by the Kubernetes actuator's gpu_capacity and the pool's size.
// Pure functions; never throw on any JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace aiscale::act::kube {

inline constexpr const char* kGpu = "nvidia.com/gpu";
// More GPUs than any node or pod has: a larger quantity is not data, and sums stop here, so
// nothing read from the API server can overflow an int.
inline constexpr int64_t kMaxGpus = 1 << 20;

// The node at a dotted path, or nullptr when any step is missing.
const nlohmann::json* Lookup(const nlohmann::json& root, const std::string& dotted);
// The string at a dotted path, or "" when missing or not a string.
std::string StringAt(const nlohmann::json& root, const std::string& dotted);
// A non-negative int32 as the API server's integer fields are, or nullopt.
std::optional<int> Int32(const nlohmann::json& v);
// A resource quantity of whole devices ("2"); extended resources are integers. -1 if not, or
// when above kMaxGpus.
int WholeQuantity(const nlohmann::json& q);
// A pod spec's effective GPU request: its containers together, or its largest init container
// (requests, else limits: an extended resource's request defaults to its limit).
int PodSpecGpus(const nlohmann::json& spec);
// Ready and not cordoned (spec.unschedulable).
bool NodeSchedulable(const nlohmann::json& node);

}  // namespace aiscale::act::kube
