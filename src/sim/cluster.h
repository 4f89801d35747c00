// Cluster: a pool of identical GPU nodes that simulated workloads rent, with provisioning
// delay, failure injection and per-account GPU-second billing.
//
// Promises: a node is billed to its account from the moment it is requested (provisioning
// included) until it is released or fails; a failed node is never billed again and goes to
// repair before it is free. Failures are drawn from std::mt19937_64 seeded with the scenario
// seed, and rate failures are pre-drawn per node at Start, so two simulations with the same
// seed see the same failures at the same times. Independent of what the workload does (training
// jobs and inference replicas both rent nodes through NodeOwner). Single-threaded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/config/config_node.h"
#include "core/result.h"
#include "sim/event_queue.h"

namespace aiscale::sim {

struct ClusterConfig {
  int nodes = 1;
  int gpus_per_node = 8;
  std::string gpu_type = "A100-80GB";
  double gpu_memory_gb = 80;
  double gpu_idle_power_w = 60;
  double gpu_max_power_w = 400;
  double price_per_gpu_hour = 0;  // on-demand
  std::optional<double> spot_price_per_gpu_hour;
  double provisioning_delay_s = 0;  // request -> node up
  double repair_s = 3600;           // failed -> free again

  // Reads the scenario's `cluster` map (defaults when absent); errors are recorded in the node.
  static ClusterConfig Parse(const config::ConfigNode& node);
};

// One entry of the scenario's `failures` list: either one failure at a time (on a node of
// `workload` when given, else on any allocated node) or a per-node Poisson rate.
struct FailureSpec {
  std::optional<double> at_s;
  std::string workload;
  double rate_per_node_hour = 0;
  static std::vector<FailureSpec> ParseList(const config::ConfigNode& list);
};

// The renter of a node. Callbacks run inside queue events.
class NodeOwner {
 public:
  virtual ~NodeOwner() = default;
  virtual void OnNodeUp(int node) = 0;
  virtual void OnNodeFailed(int node) = 0;
};

struct FailureEvent {
  double t_s = 0;
  int node = -1;
  std::string account;  // empty when the node was free or provisioning for nobody
};

class Cluster {
 public:
  Cluster(ClusterConfig c, EventQueue& q, uint64_t seed);

  // Schedules the failures of `specs` until `horizon` on the queue.
  void ScheduleFailures(const std::vector<FailureSpec>& specs, TimePoint horizon);

  int FreeNodes() const;
  // Rents `n` free nodes to `owner`, billed to `account`. They come up after the provisioning
  // delay (at once when `immediate`: nodes the workload was submitted onto). Error, and nothing
  // rented, when fewer than n are free.
  Result<std::vector<int>> Allocate(NodeOwner* owner, const std::string& account, int n,
                                    bool immediate = false);
  // Stops billing and frees the node at once; no callback. Unknown/free nodes are ignored.
  void Release(int node);
  bool IsUp(int node) const;

  double GpuSeconds(const std::string& account, TimePoint now) const;
  double GpuHours(const std::string& account, TimePoint now) const {
    return GpuSeconds(account, now) / 3600.0;
  }
  const std::vector<FailureEvent>& failures() const { return failures_; }
  const ClusterConfig& config() const { return c_; }
  // "node12/gpu3": the instance label dcgm-exporter's Hostname/gpu pair maps to.
  const std::string& GpuName(int node, int gpu) const;

  // Fails `node` now (used by scheduled failures; public for tests).
  void FailNode(int node);

 private:
  enum class State { kFree, kProvisioning, kUp, kRepairing };
  struct Node {
    State state = State::kFree;
    NodeOwner* owner = nullptr;
    std::string account;
    TimePoint billed_since{};
    uint64_t generation = 0;  // invalidates pending provisioning/repair events
  };
  void CloseBilling(Node& n);
  void FailOneOf(const std::string& account);

  ClusterConfig c_;
  EventQueue& q_;
  std::mt19937_64 rng_;
  std::vector<Node> nodes_;
  std::vector<std::string> gpu_names_;
  std::map<std::string, double> closed_gpu_seconds_;
  std::vector<FailureEvent> failures_;
};

}  // namespace aiscale::sim
