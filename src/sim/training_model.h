// TrainingModel: the physics of one data-parallel training job: its configuration and the
// per-phase throughput and hardware readings as pure functions of the node count.
//
// Why a separate file: the job's event logic (training_job.cc) and tests of the model's shape
// (monotonic, sub-linear, IO-bound loads) both read these, and nothing here knows about time.
// Phases:
// - load: moves `gb` through shared storage; rate(n) = min(n * node_gb_per_s, storage_gb_per_s),
//   so it barely speeds up once storage is the bound.
// - compute: t_step(n) = c(n) + exposed(sync(n)), c(n) = global_batch * sample_compute_s / (n*g)
//   sync(n) = t_intra [NVLink ring, every n]
//           + (n > 1) 2(n-1)/n * grad_bytes / (nic_gb_per_s * nics_per_node) + 2(n-1) * hop
//   exposed = sync when nothing overlaps; with DDP's bucketed all-reduce running during the
//   backward pass (2/3 of c(n)), exposed = max(sync - overlap * 2/3 * c(n), last bucket's share
//   of sync), the last bucket (bucket_mb of the gradients) being reduced after backward ends.
// - eval: forward-only; per-GPU batch fixed, step = b * forward_s + host_overhead_s, plus a
//   per-eval serial_s that no number of nodes shortens (metrics scored on one host).
// Utilization inside each phase's [lo, hi] range rises with the fraction of the step spent on
// GPU work rather than waiting (network, storage, host).
#pragma once

#include <string>

#include "core/config/config_node.h"
#include "core/signal.h"

namespace aiscale::sim {

struct UtilRange {
  double lo = 0;
  double hi = 1;
};

struct TrainingJobConfig {
  std::string model = "model";
  double parameters = 340e6;
  double gradient_bytes_per_param = 2;  // fp16 gradients
  double state_bytes_per_param = 16;    // mixed-precision Adam: weights, grads, master, m, v
  double total_steps = 1000;
  int global_batch = 512;
  int epochs = 1;
  int64_t checkpoint_every_steps = 0;  // a failure loses the steps since the last one; 0: none

  // compute
  double sample_compute_s = 0.0025;  // forward+backward of one sample on one GPU
  double activation_gb_per_sample = 0.1;
  int micro_batch = 32;              // per GPU; larger local batches use gradient accumulation
  double inter_node_gb_per_s = 25;   // per NIC, achievable all-reduce bandwidth
  int nics_per_node = 1;             // compute NICs per node (DGX A100: 8)
  double allreduce_overlap = 0;      // share of the backward pass the all-reduce hides behind
  double bucket_mb = 25;             // DDP bucket (PyTorch's bucket_cap_mb default)
  double intra_node_gb_per_s = 300;  // NVLink per direction
  double hop_latency_s = 10e-6;
  UtilRange compute_util{0.70, 0.95};

  // load
  double initial_load_gb = 0;
  double reload_gb = 0;
  int reload_every_epochs = 0;
  double storage_gb_per_s = 1;
  double node_gb_per_s = 1;
  UtilRange load_util{0.20, 0.40};

  // eval
  int eval_every_epochs = 0;
  double eval_samples = 0;
  int eval_batch_per_gpu = 32;
  double eval_sample_forward_s = 0.0008;
  double eval_host_overhead_s = 0.02;
  double eval_serial_s = 0;  // per eval, on one host whatever the size
  UtilRange eval_util{0.50, 0.70};

  // restart on any size change or failure
  double checkpoint_s = 60;
  double rendezvous_s = 30;
  double restore_s = 90;

  double steps_per_epoch() const { return total_steps / epochs; }
  double total_samples() const { return total_steps * global_batch; }
  double restart_s() const { return checkpoint_s + rendezvous_s + restore_s; }

  // Reads the workload's `job` map (defaults when absent); errors recorded in the node.
  static TrainingJobConfig Parse(const config::ConfigNode& job);
};

// What one phase looks like at a node count: progress rate in the phase's own unit (GB/s for
// load, steps/s for compute, eval samples/s for eval) and the readings an exporter would show.
struct PhaseRates {
  double progress_per_s = 0;
  double samples_per_s = 0;  // training samples/s (compute), eval samples/s (eval), 0 (load)
  double steps_per_s = 0;    // optimizer steps/s (compute only)
  double util = 0;           // 0-1, per running GPU
  double sm_active = 0;      // 0-1
  double mem_frac = 0;       // 0-1
  // Fraction of the step the GPU does useful work (compute / (compute + wait)).
  double busy_frac = 0;
};

struct StepTime {
  double compute_s = 0;
  double sync_s = 0;        // the all-reduce's time the step waits for (not hidden)
  double sync_total_s = 0;  // the whole all-reduce
  double total() const { return compute_s + sync_s; }
};

StepTime ComputeStepTime(const TrainingJobConfig& c, int nodes, int gpus_per_node);
PhaseRates RatesFor(const TrainingJobConfig& c, signals::Phase phase, int nodes, int gpus_per_node,
                    double gpu_memory_gb);
// The readings while the job checkpoints, re-rendezvouses and restores: no throughput.
PhaseRates RestartRates(const TrainingJobConfig& c, double gpu_memory_gb);

}  // namespace aiscale::sim
