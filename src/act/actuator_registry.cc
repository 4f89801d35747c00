#include "act/actuator_registry.h"

#include "act/kubernetes_actuator.h"
#include "act/local_actuator.h"
#include "act/slurm_actuator.h"

namespace aiscale::act {
namespace {

// Each parser validates its fields once and captures the typed config in the factory.
Result<TargetSpec> ParseLocal(const config::ConfigNode& node) {
  const size_t before = node.errors()->size();
  LocalTargetConfig cfg = LocalTargetConfig::Parse(node);
  if (node.errors()->size() > before) return Status::Invalid("see config errors");
  TargetSpec t{"local", nullptr, std::nullopt};
  t.make = [cfg](const WorkloadRef& ref, int initial,
                 const BuildEnv& env) -> Result<std::unique_ptr<Actuator>> {
    if (!env.clock || !env.http) {
      return Status::Internal("local target of " + ref.Key() + " needs a clock and HTTP client");
    }
    LocalTargetConfig c = cfg;
    if (c.run_dir.empty() && !env.run_dir.empty()) c.run_dir = env.run_dir + "/local";
    auto a = std::make_unique<LocalActuator>(ref, c, *env.clock, *env.http, initial);
    if (env.gpu_slots && env.gpus_per_replica > 0) {
      a->UseGpuSlots(env.gpu_slots, env.gpus_per_replica);
    }
    RETURN_IF_ERROR(a->Start().Wrap("unable to start local replicas of " + ref.Key()));
    return std::unique_ptr<Actuator>(std::move(a));
  };
  return t;
}

Result<TargetSpec> ParseKubernetes(const config::ConfigNode& node) {
  const size_t before = node.errors()->size();
  KubernetesTargetConfig cfg = KubernetesTargetConfig::Parse(node);
  if (node.errors()->size() > before) return Status::Invalid("see config errors");
  TargetSpec t{
      "kubernetes", nullptr,
      EngineObject{cfg.namespace_, cfg.resource.kind, cfg.name, cfg.resource.ApiVersion()}};
  t.make = [cfg](const WorkloadRef& ref, int, const BuildEnv& env) {
    return MakeKubernetesActuator(ref, cfg, env, KubeAuthEnv::Process());
  };
  return t;
}

}  // namespace

Result<ActuatorRegistry> DefaultActuatorRegistry() {
  // One line per engine. Keep alphabetical.
  return ActuatorRegistry::FromEntries("engine", {
                                                     {"kubernetes", &ParseKubernetes},
                                                     {"local", &ParseLocal},
                                                     {"slurm", &ParseSlurmTarget},
                                                 });
}

}  // namespace aiscale::act
