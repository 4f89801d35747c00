#include "sim/cluster.h"

#include <algorithm>
#include <cmath>

#include "core/numeric.h"
#include "sim/run_budget.h"

namespace aiscale::sim {

ClusterConfig ClusterConfig::Parse(const config::ConfigNode& node) {
  ClusterConfig c;
  if (!node.IsDefined()) return c;  // the caller reports the absence, at the parent
  node.CheckKnown({"nodes", "gpus_per_node", "gpu_type", "gpu_memory_gb", "gpu_idle_power_w",
                   "gpu_max_power_w", "price_per_gpu_hour", "spot_price_per_gpu_hour",
                   "provisioning_delay", "repair_time"});
  // The cluster is allocated up front (a record per node, a name per GPU): docs/limits.md.
  c.nodes = node.Int("nodes", c.nodes, config::Between(1, kMaxClusterNodes));
  c.gpus_per_node = node.Int("gpus_per_node", c.gpus_per_node, config::Between(1, kMaxGpusPerNode));
  const int64_t gpus = static_cast<int64_t>(c.nodes) * c.gpus_per_node;
  if (gpus > kMaxClusterGpus) {
    node.ErrorAt("gpus_per_node", "nodes x gpus_per_node = " + std::to_string(gpus) +
                                      " GPUs; at most " + std::to_string(kMaxClusterGpus) +
                                      " per scenario (docs/limits.md)");
    c.nodes = 1;  // the config is rejected; keep what a scratch build allocates small
  }
  c.gpu_type = node.String("gpu_type", c.gpu_type);
  const config::Bounds price = config::Between(0, 1e6);  // per GPU-hour
  c.gpu_memory_gb = node.Number("gpu_memory_gb", c.gpu_memory_gb, config::Bounds{0, 1e6, true});
  c.gpu_idle_power_w = node.Number("gpu_idle_power_w", c.gpu_idle_power_w, config::Between(0, 1e5));
  c.gpu_max_power_w =
      node.Number("gpu_max_power_w", c.gpu_max_power_w, config::Bounds{0, 1e5, true});
  c.price_per_gpu_hour = node.Number("price_per_gpu_hour", c.price_per_gpu_hour, price);
  if (node.Has("spot_price_per_gpu_hour")) {
    c.spot_price_per_gpu_hour = node.Number("spot_price_per_gpu_hour", 0, price);
  }
  c.provisioning_delay_s =
      node.DurationSeconds("provisioning_delay", c.provisioning_delay_s, config::AtLeast(0));
  c.repair_s = node.DurationSeconds("repair_time", c.repair_s, config::AtLeast(0));
  if (c.gpu_idle_power_w > c.gpu_max_power_w) {
    node.ErrorAt("gpu_idle_power_w", "gpu_idle_power_w must be <= gpu_max_power_w");
  }
  return c;
}

std::vector<FailureSpec> FailureSpec::ParseList(const config::ConfigNode& list) {
  std::vector<FailureSpec> out;
  for (const auto& item : list.Items()) {
    FailureSpec f;
    item.CheckKnown({"at", "workload", "rate_per_node_hour"});
    if (item.Has("at")) f.at_s = item.DurationSeconds("at", 0, config::AtLeast(0));
    f.workload = item.String("workload", "");
    // Failures are pre-drawn per node; the scenario bounds rate x nodes x hours (limits.md).
    f.rate_per_node_hour = item.Number("rate_per_node_hour", 0, config::Between(0, 3600));
    if (f.at_s.has_value() == item.Has("rate_per_node_hour")) {
      item.Error("a failure needs exactly one of `at` or `rate_per_node_hour`");
    }
    out.push_back(f);
  }
  return out;
}

Cluster::Cluster(ClusterConfig c, EventQueue& q, uint64_t seed)
    : c_(std::move(c)), q_(q), rng_(seed), nodes_(c_.nodes) {
  gpu_names_.reserve(static_cast<size_t>(c_.nodes) * c_.gpus_per_node);
  for (int n = 0; n < c_.nodes; ++n) {
    for (int g = 0; g < c_.gpus_per_node; ++g) {
      gpu_names_.push_back("node" + std::to_string(n) + "/gpu" + std::to_string(g));
    }
  }
}

const std::string& Cluster::GpuName(int node, int gpu) const {
  return gpu_names_[static_cast<size_t>(node) * c_.gpus_per_node + gpu];
}

void Cluster::ScheduleFailures(const std::vector<FailureSpec>& specs, TimePoint horizon) {
  for (const auto& f : specs) {
    if (f.at_s) {
      const std::string account = f.workload;
      if (*f.at_s > SinceEpochSeconds(horizon)) continue;  // past the run's end: never fires
      q_.At(AtSeconds(*f.at_s), [this, account] { FailOneOf(account); });
      continue;
    }
    if (f.rate_per_node_hour <= 0) continue;
    // Pre-drawn per node, so a run's failures do not depend on what the policy did.
    std::exponential_distribution<double> gap(f.rate_per_node_hour / 3600.0);
    for (int n = 0; n < c_.nodes; ++n) {
      double t = gap(rng_);
      while (t < SinceEpochSeconds(horizon)) {
        q_.At(AtSeconds(t), [this, n] { FailNode(n); });
        t += gap(rng_);
      }
    }
  }
}

int Cluster::FreeNodes() const {
  return static_cast<int>(std::count_if(nodes_.begin(), nodes_.end(),
                                        [](const Node& n) { return n.state == State::kFree; }));
}

Result<std::vector<int>> Cluster::Allocate(NodeOwner* owner, const std::string& account, int n,
                                           bool immediate) {
  if (n < 0) return Status::Error("unable to allocate a negative node count");
  std::vector<int> ids;
  for (int i = 0; i < c_.nodes && static_cast<int>(ids.size()) < n; ++i) {
    if (nodes_[i].state == State::kFree) ids.push_back(i);
  }
  if (static_cast<int>(ids.size()) < n) {
    return Status::Error("unable to allocate " + std::to_string(n) + " nodes for " + account +
                         ": only " + std::to_string(ids.size()) + " free");
  }
  const TimePoint now = q_.Now();
  for (int id : ids) {
    Node& node = nodes_[id];
    node.owner = owner;
    node.account = account;
    node.billed_since = now;
    const uint64_t gen = ++node.generation;
    if (immediate || c_.provisioning_delay_s <= 0) {
      node.state = State::kUp;
      if (!immediate) owner->OnNodeUp(id);
      continue;
    }
    node.state = State::kProvisioning;
    q_.After(Seconds(c_.provisioning_delay_s), [this, id, gen] {
      Node& nd = nodes_[id];
      if (nd.generation != gen || nd.state != State::kProvisioning) return;
      nd.state = State::kUp;
      nd.owner->OnNodeUp(id);
    });
  }
  return ids;
}

void Cluster::CloseBilling(Node& n) {
  const double s = ToSeconds(q_.Now() - n.billed_since);
  closed_gpu_seconds_[n.account] += s * c_.gpus_per_node;
}

void Cluster::Release(int id) {
  if (id < 0 || id >= c_.nodes) return;
  Node& n = nodes_[id];
  if (n.state != State::kProvisioning && n.state != State::kUp) return;
  CloseBilling(n);
  n.state = State::kFree;
  n.owner = nullptr;
  n.account.clear();
  ++n.generation;
}

bool Cluster::IsUp(int id) const {
  return id >= 0 && id < c_.nodes && nodes_[id].state == State::kUp;
}

void Cluster::FailNode(int id) {
  if (id < 0 || id >= c_.nodes) return;
  Node& n = nodes_[id];
  if (n.state == State::kRepairing) return;
  FailureEvent ev{SinceEpochSeconds(q_.Now()), id, n.account};
  NodeOwner* owner = n.owner;
  const bool rented = n.state == State::kProvisioning || n.state == State::kUp;
  if (rented) CloseBilling(n);
  n.state = State::kRepairing;
  n.owner = nullptr;
  n.account.clear();
  const uint64_t gen = ++n.generation;
  q_.After(Seconds(c_.repair_s), [this, id, gen] {
    if (nodes_[id].generation == gen) nodes_[id].state = State::kFree;
  });
  failures_.push_back(ev);
  if (rented && owner) owner->OnNodeFailed(id);
}

void Cluster::FailOneOf(const std::string& account) {
  // Prefer a node doing work: that is the failure a scenario's author means.
  std::vector<int> candidates;
  for (State want : {State::kUp, State::kProvisioning}) {
    for (int i = 0; i < c_.nodes; ++i) {
      const Node& n = nodes_[i];
      if (n.state == want && (account.empty() ? n.owner != nullptr : n.account == account)) {
        candidates.push_back(i);
      }
    }
    if (!candidates.empty()) break;
  }
  if (candidates.empty()) {
    for (int i = 0; i < c_.nodes; ++i) {
      if (nodes_[i].state == State::kFree) candidates.push_back(i);
    }
  }
  if (candidates.empty()) return;
  std::uniform_int_distribution<size_t> pick(0, candidates.size() - 1);
  FailNode(candidates[pick(rng_)]);
}

double Cluster::GpuSeconds(const std::string& account, TimePoint now) const {
  auto it = closed_gpu_seconds_.find(account);
  double s = it == closed_gpu_seconds_.end() ? 0 : it->second;
  for (const Node& n : nodes_) {
    if ((n.state == State::kProvisioning || n.state == State::kUp) && n.account == account) {
      s += ToSeconds(now - n.billed_since) * c_.gpus_per_node;
    }
  }
  return s;
}

}  // namespace aiscale::sim
