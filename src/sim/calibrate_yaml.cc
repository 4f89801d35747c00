// The calibrated job as scenario YAML (training_model.h's schema), and the fidelity table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/calibrate.h"

namespace aiscale::sim {
namespace {

// The model's gradients: any size works (the fit sets the bandwidth that makes sync_s), this
// one keeps the memory readings of a small MLP.
constexpr double kParameters = 1e6;
constexpr double kGradientBytesPerParam = 2;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string Secs(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fs", std::max(0.0, v));
  return buf;
}

}  // namespace

std::string JobYaml(const Calibration& c, int indent) {
  const std::string p(indent, ' ');
  const double grad_gb = kParameters * kGradientBytesPerParam / 1e9;
  // sync(n) = 2 (n-1)/n grad_gb / bandwidth = sync_s (n-1)/n; no sync: a bandwidth so high it
  // adds nothing.
  const double bandwidth = c.sync_s > 0 ? 2 * grad_gb / c.sync_s : 1e12;
  std::ostringstream o;
  o << p << "# Calibrated from a real run: samples/s by world size measured";
  for (const auto& [n, sps] : c.samples_per_s) o << " " << n << ": " << Num(sps);
  o << "; model";
  for (int n = 1; n <= std::max(3, c.samples_per_s.rbegin()->first); ++n) {
    o << " " << n << ": " << Num(c.ModelSamplesPerS(n));
  }
  o << ".\n";
  o << p << "model: calibrated\n";
  o << p << "parameters: " << Num(kParameters) << "\n";
  o << p << "gradient_bytes_per_param: " << Num(kGradientBytesPerParam) << "\n";
  o << p << "global_batch: " << c.batch << "   # samples per rank per step in the real job\n";
  o << p << "total_samples: " << Num(c.total_samples) << "\n";
  o << p << "epochs: " << c.epochs << "\n";
  o << p << "compute:\n";
  o << p << "  sample_compute_s: " << Num(std::max(c.sample_compute_s, 1e-9)) << "\n";
  o << p << "  micro_batch: " << c.batch << "\n";
  o << p << "  activation_gb_per_sample: 0\n";
  o << p << "  inter_node_gb_per_s: " << Num(bandwidth) << "\n";
  o << p << "  nics_per_node: 1\n";
  o << p << "  allreduce_overlap: 0\n";
  o << p << "  hop_latency_s: " << Num(c.hop_s) << "\n";
  if (c.load_s > 0) {
    // Storage-bound: as long at every world size (1 GB/s for the job and for each node).
    o << p << "load:   # " << Num(c.load_s) << " s measured, at any world size\n";
    o << p << "  initial_gb: " << Num(c.load_s) << "\n";
    if (c.epochs > 1) {
      o << p << "  reload_gb: " << Num(c.load_s) << "\n";
      o << p << "  reload_every_epochs: 1\n";
    }
    o << p << "  storage_gb_per_s: 1\n";
    o << p << "  node_gb_per_s: 1\n";
  }
  if (c.eval_parallel_s + c.eval_serial_s > 0) {
    o << p << "eval:   # measured (s) by world size:";
    for (const auto& [n, len] : c.eval_s) o << " " << n << ": " << Num(len);
    o << "\n";
    o << p << "  every_epochs: 1\n";
    o << p << "  samples: 1\n";
    o << p << "  batch_per_gpu: 1\n";
    o << p << "  sample_forward_s: " << Num(std::max(c.eval_parallel_s, 1e-6)) << "\n";
    o << p << "  host_overhead_s: 0\n";
    o << p << "  serial_s: " << Secs(c.eval_serial_s) << "\n";
  }
  o << p << "restart:   # no progress from the last step before a rescale to the restart\n";
  o << p << "  checkpoint: 0s\n";
  o << p << "  rendezvous: " << Secs(c.restart_gap_s) << "\n";
  o << p << "  restore: 0s\n";
  return o.str();
}

std::string ScenarioYaml(const Calibration& c, const ScenarioFrame& f) {
  std::ostringstream o;
  o << "# Written by `aiscale calibrate` from a real run's events log and decisions.\n";
  o << "# One node = one torchrun agent (one worker, one CPU thread); a grow's new agent joins\n";
  o << "# after provisioning_delay (measured: grow decision -> last step at the old size).\n";
  o << "apiVersion: aiscale.dev/v1alpha1\nkind: Scenario\nspec:\n";
  o << "  name: " << f.name << "\n  seed: 1\n";
  o << "  duration: " << Secs(std::max(7200.0, 4 * c.real.job_time_s)) << "\n";
  o << "  control_period: " << Secs(f.control_period_s) << "\n";
  o << "  report_interval: " << Secs(f.control_period_s) << "\n";
  o << "  scrape_interval: " << Secs(f.control_period_s) << "\n";
  o << "  noise: 0\n";
  o << "  cluster:\n    nodes: " << std::max(f.max_replicas, 1)
    << "\n    gpus_per_node: 1\n    gpu_type: cpu-agent\n    gpu_memory_gb: 16\n"
    << "    price_per_gpu_hour: 1\n    provisioning_delay: " << Secs(c.grow_lead_s) << "\n";
  o << "  workloads:\n    - name: " << f.workload << "\n      kind: TrainingJob\n";
  o << "      min_replicas: " << f.min_replicas << "\n      max_replicas: " << f.max_replicas
    << "\n      initial_replicas: " << c.initial_world << "\n";
  o << "      policy: " << f.policy_yaml << "\n";
  o << "      job:\n" << JobYaml(c, 8);
  return o.str();
}

std::vector<FidelityRow> CompareWithRun(const RealRun& real,
                                        const report::WorkloadSummary& summary) {
  const report::TrainingFigures t = summary.training.value_or(report::TrainingFigures{});
  auto row = [](std::string what, double predicted, double actual) {
    FidelityRow r{std::move(what), predicted, actual, 0};
    if (actual != 0) r.error = predicted / actual - 1;
    if (actual == 0 && predicted != 0) r.error = 1;
    return r;
  };
  return {
      row("rescales", summary.rescales, real.rescales),
      row("load time (s)", t.load_s, real.load_s),
      row("compute time (s)", t.compute_s, real.compute_s),
      row("eval time (s)", t.eval_s, real.eval_s),
      row("restart time (s)", t.restart_time_s, real.restart_s),
      row("job time (s)", summary.completion_time_s, real.job_time_s),
      row("node-hours", summary.gpu_hours, real.node_hours),
  };
}

}  // namespace aiscale::sim
