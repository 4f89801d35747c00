#include "sim/training_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "sim/run_budget.h"

namespace aiscale::sim {
namespace {

// `key: [lo, hi]` with 0 <= lo <= hi <= 1.
UtilRange ParseRange(const config::ConfigNode& parent, const std::string& key, UtilRange r) {
  if (!parent.Has(key)) return r;
  const config::ConfigNode n = parent.Child(key);
  const auto items = n.Items();
  if (!n.IsSequence()) return r;
  if (items.size() != 2) {
    n.Error("must be a list of two numbers [lo, hi]");
    return r;
  }
  double v[2];
  for (int i = 0; i < 2; ++i) {
    const YAML::Node& raw = items[i].raw();
    char* end = nullptr;
    const std::string s = raw.IsScalar() ? raw.Scalar() : "";
    v[i] = std::strtod(s.c_str(), &end);
    if (s.empty() || !end || *end != '\0' || !std::isfinite(v[i]) || v[i] < 0 || v[i] > 1) {
      items[i].Error("must be a number in [0, 1]");
      return r;
    }
  }
  if (v[0] > v[1]) {
    n.Error("lo must be <= hi");
    return r;
  }
  return {v[0], v[1]};
}

// (0, max]: a positive quantity with an upper bound (docs/limits.md).
config::Bounds Upto(double max) { return config::Bounds{0, max, true}; }
// Bandwidths: below 1 KB/s a phase would outlast any run; above 1 PB/s is not a machine.
const config::Bounds kGbPerS = config::Between(1e-6, 1e6);
// One sample's (or hop's) time in seconds.
constexpr double kMaxSampleSeconds = 3600;

double Lerp(UtilRange r, double f) { return r.lo + (r.hi - r.lo) * std::clamp(f, 0.0, 1.0); }

// Share of a GPU's busy time spent on SM-heavy kernels, per phase: compute kernels keep most
// SMs busy; eval at small batch and load-time decode kernels keep fewer.
constexpr double kSmPerBusyCompute = 0.85;
constexpr double kSmPerBusyEval = 0.7;
constexpr double kSmPerBusyLoad = 0.5;

}  // namespace

TrainingJobConfig TrainingJobConfig::Parse(const config::ConfigNode& job) {
  using config::Above;
  using config::AtLeast;
  using config::Between;
  TrainingJobConfig c;
  if (!job.IsDefined()) return c;  // the caller reports the absence, at the parent
  job.CheckKnown({"model", "parameters", "gradient_bytes_per_param", "state_bytes_per_param",
                  "total_steps", "total_samples", "global_batch", "epochs",
                  "checkpoint_every_steps", "compute", "load", "eval", "restart"});
  c.model = job.String("model", c.model);
  c.parameters = job.Number("parameters", c.parameters, Upto(1e15));
  c.gradient_bytes_per_param =
      job.Number("gradient_bytes_per_param", c.gradient_bytes_per_param, Upto(1e3));
  c.state_bytes_per_param = job.Number("state_bytes_per_param", c.state_bytes_per_param, Upto(1e3));
  c.global_batch = job.Int("global_batch", c.global_batch, Between(1, kMaxGlobalBatch));
  c.epochs = job.Int("epochs", c.epochs, Between(1, kMaxEpochs));
  if (job.Has("total_steps") == job.Has("total_samples")) {
    job.Error("give exactly one of total_steps or total_samples");
  } else if (job.Has("total_steps")) {
    c.total_steps =
        job.Number("total_steps", c.total_steps, Between(kMinTrainingSteps, kMaxTrainingSteps));
  } else {
    // At least one global batch: a job of a fraction of a step never ends an epoch.
    c.total_steps = job.Number("total_samples", c.total_steps * c.global_batch,
                               Between(kMinTrainingSteps * c.global_batch,
                                       kMaxTrainingSteps * c.global_batch)) /
                    c.global_batch;
  }
  c.checkpoint_every_steps = job.Int("checkpoint_every_steps", 0, AtLeast(0));

  const auto compute = job.Child("compute");
  if (compute.IsDefined()) {
    compute.CheckKnown({"sample_compute_s", "activation_gb_per_sample", "micro_batch",
                        "inter_node_gb_per_s", "nics_per_node", "allreduce_overlap", "bucket_mb",
                        "intra_node_gb_per_s", "hop_latency_s", "util"});
    c.sample_compute_s =
        compute.Number("sample_compute_s", c.sample_compute_s, Upto(kMaxSampleSeconds));
    c.activation_gb_per_sample =
        compute.Number("activation_gb_per_sample", c.activation_gb_per_sample, Between(0, 1e6));
    c.micro_batch = compute.Int("micro_batch", c.micro_batch, Between(1, kMaxGlobalBatch));
    c.inter_node_gb_per_s = compute.Number("inter_node_gb_per_s", c.inter_node_gb_per_s, kGbPerS);
    c.nics_per_node = compute.Int("nics_per_node", c.nics_per_node, Between(1, 1024));
    c.allreduce_overlap =
        compute.Number("allreduce_overlap", c.allreduce_overlap, config::Between(0, 1));
    c.bucket_mb = compute.Number("bucket_mb", c.bucket_mb, Upto(1e6));
    c.intra_node_gb_per_s = compute.Number("intra_node_gb_per_s", c.intra_node_gb_per_s, kGbPerS);
    c.hop_latency_s =
        compute.Number("hop_latency_s", c.hop_latency_s, Between(0, kMaxSampleSeconds));
    c.compute_util = ParseRange(compute, "util", c.compute_util);
  }

  const auto load = job.Child("load");
  if (load.IsDefined()) {
    load.CheckKnown({"initial_gb", "reload_gb", "reload_every_epochs", "storage_gb_per_s",
                     "node_gb_per_s", "util"});
    c.initial_load_gb = load.Number("initial_gb", c.initial_load_gb, Between(0, 1e9));
    c.reload_gb = load.Number("reload_gb", c.reload_gb, Between(0, 1e9));
    c.reload_every_epochs =
        load.Int("reload_every_epochs", c.reload_every_epochs, Between(0, kMaxEpochs));
    c.storage_gb_per_s = load.Number("storage_gb_per_s", c.storage_gb_per_s, kGbPerS);
    c.node_gb_per_s = load.Number("node_gb_per_s", c.node_gb_per_s, kGbPerS);
    c.load_util = ParseRange(load, "util", c.load_util);
  }

  const auto eval = job.Child("eval");
  if (eval.IsDefined()) {
    eval.CheckKnown({"every_epochs", "samples", "batch_per_gpu", "sample_forward_s",
                     "host_overhead_s", "serial_s", "util"});
    c.eval_every_epochs = eval.Int("every_epochs", c.eval_every_epochs, Between(0, kMaxEpochs));
    c.eval_samples = eval.Number("samples", c.eval_samples, Between(0, 1e12));
    c.eval_batch_per_gpu =
        eval.Int("batch_per_gpu", c.eval_batch_per_gpu, Between(1, kMaxGlobalBatch));
    c.eval_sample_forward_s =
        eval.Number("sample_forward_s", c.eval_sample_forward_s, Upto(kMaxSampleSeconds));
    c.eval_host_overhead_s =
        eval.Number("host_overhead_s", c.eval_host_overhead_s, Between(0, kMaxSampleSeconds));
    c.eval_serial_s = eval.DurationSeconds("serial_s", c.eval_serial_s, AtLeast(0));
    c.eval_util = ParseRange(eval, "util", c.eval_util);
  }

  const auto restart = job.Child("restart");
  if (restart.IsDefined()) {
    restart.CheckKnown({"checkpoint", "rendezvous", "restore"});
    c.checkpoint_s = restart.DurationSeconds("checkpoint", c.checkpoint_s, AtLeast(0));
    c.rendezvous_s = restart.DurationSeconds("rendezvous", c.rendezvous_s, AtLeast(0));
    c.restore_s = restart.DurationSeconds("restore", c.restore_s, AtLeast(0));
  }

  if (c.reload_every_epochs > 0 && c.reload_gb <= 0) {
    load.ErrorAt("reload_gb", "reload_every_epochs needs reload_gb > 0");
  }
  if (c.eval_every_epochs > 0 && c.eval_samples <= 0) {
    eval.ErrorAt("samples", "every_epochs needs samples > 0");
  }
  (void)Between;
  return c;
}

StepTime ComputeStepTime(const TrainingJobConfig& c, int nodes, int gpus_per_node) {
  const int n = std::max(nodes, 1);
  const double gpus = static_cast<double>(n) * gpus_per_node;
  const double grad_gb = c.parameters * c.gradient_bytes_per_param / 1e9;
  StepTime t;
  t.compute_s = c.global_batch * c.sample_compute_s / gpus;
  // Hierarchical all-reduce: a ring over NVLink inside the node, then a ring across nodes.
  const double g = gpus_per_node;
  double sync = 2.0 * (g - 1) / g * grad_gb / c.intra_node_gb_per_s;
  if (n > 1) {
    sync += 2.0 * (n - 1) / n * grad_gb / (c.inter_node_gb_per_s * c.nics_per_node) +
            2.0 * (n - 1) * c.hop_latency_s;
  }
  t.sync_total_s = sync;
  // DDP reduces each bucket as soon as backward has produced it: all but the last bucket can
  // hide behind the rest of the backward pass (about 2/3 of forward + backward).
  const double last_bucket = std::min(1.0, c.bucket_mb / 1e3 / std::max(grad_gb, 1e-12));
  const double hidden = c.allreduce_overlap * (2.0 / 3.0) * t.compute_s;
  t.sync_s = c.allreduce_overlap > 0 ? std::max(sync - hidden, last_bucket * sync) : sync;
  return t;
}

PhaseRates RatesFor(const TrainingJobConfig& c, signals::Phase phase, int nodes, int gpus_per_node,
                    double gpu_memory_gb) {
  const int n = std::max(nodes, 1);
  const double gpus = static_cast<double>(n) * gpus_per_node;
  const double state_gb = c.parameters * c.state_bytes_per_param / 1e9;
  PhaseRates r;
  switch (phase) {
    case signals::Phase::kLoad: {
      const double rate = std::min(n * c.node_gb_per_s, c.storage_gb_per_s);
      r.progress_per_s = rate;
      // Each node's share of the storage stream against what it could ingest alone.
      r.busy_frac = rate / n / c.node_gb_per_s;
      r.util = Lerp(c.load_util, r.busy_frac);
      r.sm_active = r.util * kSmPerBusyLoad;
      r.mem_frac = state_gb / gpu_memory_gb;
      break;
    }
    case signals::Phase::kCompute: {
      const StepTime st = ComputeStepTime(c, n, gpus_per_node);
      r.steps_per_s = 1.0 / st.total();
      r.progress_per_s = r.steps_per_s;
      r.samples_per_s = r.steps_per_s * c.global_batch;
      r.busy_frac = st.compute_s / st.total();
      r.util = Lerp(c.compute_util, r.busy_frac);
      r.sm_active = r.util * kSmPerBusyCompute;
      const double local = std::min<double>(c.micro_batch, c.global_batch / gpus);
      r.mem_frac = (state_gb + local * c.activation_gb_per_sample) / gpu_memory_gb;
      break;
    }
    case signals::Phase::kEval: {
      const double work = c.eval_batch_per_gpu * c.eval_sample_forward_s;
      // Metric reduction across nodes: latency-bound, tiny next to the forward pass.
      const double step = work + c.eval_host_overhead_s + 2.0 * (n - 1) * c.hop_latency_s;
      r.samples_per_s = gpus * c.eval_batch_per_gpu / step;
      r.busy_frac = work / step;
      if (c.eval_serial_s > 0 && c.eval_samples > 0) {
        // The serial part (one host scoring) adds the same time at every size; spread over
        // the phase, it lowers the mean rate and the GPUs' busy share.
        const double parallel_s = c.eval_samples / r.samples_per_s;
        const double total_s = parallel_s + c.eval_serial_s;
        r.samples_per_s = c.eval_samples / total_s;
        r.busy_frac *= parallel_s / total_s;
      }
      r.progress_per_s = r.samples_per_s;
      r.util = Lerp(c.eval_util, r.busy_frac);
      r.sm_active = r.util * kSmPerBusyEval;
      // Forward activations are about a third of training's (no saved tensors for backward).
      r.mem_frac =
          (state_gb + c.eval_batch_per_gpu * c.activation_gb_per_sample / 3) / gpu_memory_gb;
      break;
    }
  }
  r.mem_frac = std::clamp(r.mem_frac, 0.0, 0.98);
  return r;
}

PhaseRates RestartRates(const TrainingJobConfig& c, double gpu_memory_gb) {
  PhaseRates r;
  // Checkpoint save/restore copies tensors: a trickle of kernels, near-zero utilization.
  r.util = 0.02;
  r.sm_active = 0.01;
  r.mem_frac = std::clamp(c.parameters * c.state_bytes_per_param / 1e9 / gpu_memory_gb, 0.0, 0.98);
  return r;
}

}  // namespace aiscale::sim
