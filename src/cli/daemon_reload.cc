// Daemon's config reload (SIGHUP), on the tick's thread between ticks: see config_reload.h.
#include "cli/daemon.h"
#include "control/assembler.h"

namespace aiscale::cli {

bool Daemon::WaitForTick(TimePoint next) {
  // Short waits, so a reload asked for between ticks is done within a quarter second.
  while (!stop_ && clock_.Now() < next) {
    if (reload_.exchange(false)) Reload();
    if (!WaitUntil(std::min(next, clock_.Now() + Seconds(0.25)))) return false;
  }
  return !stop_;
}

void Daemon::Reload() {
  telemetry_.DeclareCounter("aiscale_config_reloads_total",
                            "Config reloads asked for (SIGHUP), by result: applied or rejected.");
  const std::string rejected =
      "aiscale: reload of " + cfg_.file + " rejected; still running the previous config: ";
  config::ConfigErrors errors;
  const config::ConfigNode root = config::LoadConfigFile(cfg_.file, errors);
  auto cfg = errors.empty() ? ParseControllerConfig(root)
                            : Result<ControllerConfig>(Status::Invalid("unreadable"));
  std::string why;
  if (!cfg.ok()) {
    why = "the file has errors:\n" + errors.ToStatus().message();
  } else if (!running_parts_) {
    why = "the running config was not read from a file";
  } else if (const std::string diff = RestartDifference(*running_parts_, RestartPartsOf(root));
             !diff.empty()) {
    why = diff + " changed, which needs a restart";
  }
  std::vector<control::WorkloadBinding> fresh;
  for (size_t i = 0; why.empty() && i < cfg->workloads.size(); ++i) {
    const WorkloadSpec& w = cfg->workloads[i];
    control::SourceLookup lookup;
    lookup.by_name = [this](const std::string& name) -> MetricSource* {
      auto it = sources_.find(name);
      return it == sources_.end() ? nullptr : it->second.get();
    };
    auto b = control::Assemble(w, w.pipeline, lookup, actuators_[w.ref.Key()].get());
    if (!b.ok()) why = b.status().message();
    if (b.ok()) fresh.push_back(std::move(b).value());
  }
  if (!why.empty()) {
    log_ << rejected << why << "\n";
    log_.flush();
    telemetry_.Add("aiscale_config_reloads_total", {{"result", "rejected"}});
    return;
  }
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (const Status st = controller_->Reconfigure(i, fresh[i]); !st.ok()) {
      log_ << "aiscale: reload: " << st.message() << "\n";
    }
  }
  gate_.Set(cfg->server.token);
  cfg_.workloads = std::move(cfg->workloads);
  cfg_.server.token = cfg->server.token;
  running_parts_ = RestartPartsOf(root);
  PublishBounds();
  log_ << "aiscale: reloaded " << cfg_.file << ": " << fresh.size()
       << " workload(s) reconfigured; steering " << (cfg_.server.token.empty() ? "off" : "on")
       << "\n";
  log_.flush();
  telemetry_.Add("aiscale_config_reloads_total", {{"result", "applied"}});
}

}  // namespace aiscale::cli
