#include "sim/workload_factory.h"

#include "sim/demand/gpu_demand.h"
#include "sim/inference/inference_service.h"
#include "sim/training_job.h"

namespace aiscale::sim {
namespace {

std::unique_ptr<SimWorkload> BuildTrainingJob(const config::ConfigNode& workload,
                                              const WorkloadEnv& env) {
  const size_t before = workload.errors()->size();
  if (!workload.Has("job")) workload.Error("a TrainingJob needs a `job` map");
  TrainingJobConfig cfg = TrainingJobConfig::Parse(workload.Child("job"));
  if (workload.errors()->size() > before) return nullptr;
  return std::make_unique<TrainingJob>(std::move(cfg), env,
                                       TrainingOracleSettings::FromWorkload(workload));
}

}  // namespace

const std::vector<WorkloadKind>& WorkloadKinds() {
  // One line per kind. Keep alphabetical.
  static const std::vector<WorkloadKind> kKinds = {
      {"GpuDemand", "demand", &demand::BuildGpuDemand},
      {"InferenceService", "service", &inference::BuildInferenceService},
      {"TrainingJob", "job", &BuildTrainingJob},
  };
  return kKinds;
}

const WorkloadKind* FindWorkloadKind(std::string_view kind) {
  for (const auto& k : WorkloadKinds()) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

}  // namespace aiscale::sim
