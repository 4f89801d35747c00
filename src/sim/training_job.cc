#include "sim/training_job.h"

#include <algorithm>
#include <cmath>

#include "sim/noise.h"

namespace aiscale::sim {
namespace {

using signals::Phase;

// A phase counts as finished when this little of it is left (floating-point slack).
constexpr double kEps = 1e-9;

}  // namespace

TrainingJob::TrainingJob(TrainingJobConfig cfg, WorkloadEnv env, TrainingOracleSettings rules)
    : cfg_(std::move(cfg)), env_(std::move(env)), oracle_rules_(rules) {
  ref_.kind = "TrainingJob";
  ref_.name = env_.name;
}

Result<TrainingOracleResult> TrainingJob::Oracle() const {
  TrainingOracleInput in;
  in.job = cfg_;
  in.rules = oracle_rules_;
  const ClusterConfig& cc = env_.cluster->config();
  in.gpus_per_node = cc.gpus_per_node;
  in.gpu_memory_gb = cc.gpu_memory_gb;
  in.initial_replicas = env_.initial_replicas;
  in.cluster_nodes = cc.nodes;
  in.provisioning_s = cc.provisioning_delay_s;
  for (const auto& f : failures_) in.failure_s.push_back(f.t_s);
  return ComputeTrainingOracle(in);
}

double TrainingJob::ColdStartSeconds() const {
  return env_.cluster->config().provisioning_delay_s + cfg_.restart_s();
}

void TrainingJob::Start(EventQueue& q) {
  q_ = &q;
  last_advance_ = q.Now();
  auto ids = env_.cluster->Allocate(this, env_.name, env_.initial_replicas, /*immediate=*/true);
  if (ids.ok()) {
    nodes_ = *ids;
    running_.insert(nodes_.begin(), nodes_.end());
  }
  if (cfg_.initial_load_gb > 0) {
    BeginPhase(Phase::kLoad, cfg_.initial_load_gb);
  } else {
    BeginPhase(Phase::kCompute, ComputeBoundarySteps());
  }
  UpdateRates();
  Reschedule();
}

int TrainingJob::CompletedEpochs(double steps) const {
  const double e = std::floor(steps / cfg_.steps_per_epoch() + kEps);
  return static_cast<int>(std::min<double>(e, cfg_.epochs));
}

double TrainingJob::ComputeBoundarySteps() const {
  const int e = CompletedEpochs(steps_);
  int next = e + 1;
  for (; next < cfg_.epochs; ++next) {
    const bool eval = cfg_.eval_every_epochs > 0 && next % cfg_.eval_every_epochs == 0;
    const bool reload = cfg_.reload_every_epochs > 0 && next % cfg_.reload_every_epochs == 0;
    if (eval || reload) break;
  }
  const double target = std::min(next * cfg_.steps_per_epoch(), cfg_.total_steps);
  return std::max(target - steps_, 0.0);
}

void TrainingJob::BeginPhase(Phase p, double total) {
  phase_ = p;
  phase_total_ = total;
  phase_done_ = 0;
  phase_start_steps_ = steps_;
}

void TrainingJob::NextPhase() {
  const bool finished = steps_ >= cfg_.total_steps * (1 - kEps);
  const int e = CompletedEpochs(steps_);
  const bool eval_due = cfg_.eval_every_epochs > 0 && e > 0 && e % cfg_.eval_every_epochs == 0;
  const bool reload_due =
      cfg_.reload_every_epochs > 0 && e > 0 && e % cfg_.reload_every_epochs == 0;
  if (phase_ == Phase::kCompute && eval_due) {
    BeginPhase(Phase::kEval, cfg_.eval_samples);
    return;
  }
  if (finished) {
    Finish();
    return;
  }
  if (phase_ != Phase::kLoad && reload_due) {
    BeginPhase(Phase::kLoad, cfg_.reload_gb);
    return;
  }
  BeginPhase(Phase::kCompute, ComputeBoundarySteps());
}

void TrainingJob::Finish() {
  done_ = true;
  finish_ = Now();
  for (int id : nodes_) env_.cluster->Release(id);
  nodes_.clear();
  running_.clear();
  restarting_ = false;
  for (auto& f : failures_) {
    if (f.recovered_s < 0) f.recovered_s = SinceEpochSeconds(finish_) - f.t_s;
  }
}

void TrainingJob::Advance() {
  const TimePoint now = Now();
  const double dt = ToSeconds(now - last_advance_);
  last_advance_ = now;
  if (dt <= 0 || done_) return;
  util_gpu_s_ += rates_.util * static_cast<double>(running_.size()) * gpus_per_node() * dt;
  if (restarting_) {
    restart_time_s_ += dt;
    return;
  }
  if (running_.empty()) return;
  phase_done_ = std::min(phase_total_, phase_done_ + rates_.progress_per_s * dt);
  if (phase_ == Phase::kCompute) steps_ = phase_start_steps_ + phase_done_;
  phase_time_s_[static_cast<int>(phase_)] += dt;
}

void TrainingJob::StartRestart(bool save_checkpoint) {
  running_.clear();
  for (int id : nodes_) {
    if (env_.cluster->IsUp(id)) running_.insert(id);
  }
  if (running_.empty()) {
    restarting_ = false;  // nothing to restart on until a node comes up
    return;
  }
  restarting_ = true;
  ++restarts_;
  const double cost =
      (save_checkpoint ? cfg_.checkpoint_s : 0) + cfg_.rendezvous_s + cfg_.restore_s;
  restart_end_ = AddSaturating(Now(), Seconds(cost));
}

void TrainingJob::Reconcile(bool lost_member) {
  if (done_) return;
  if (lost_member) {
    // Survivors hold the state in memory only if they were training, not mid-restart.
    StartRestart(/*save_checkpoint=*/!restarting_);
    return;
  }
  if (restarting_) return;  // newcomers join at the next rendezvous, after this one
  bool all_up = true;
  for (int id : nodes_) all_up = all_up && env_.cluster->IsUp(id);
  if (!all_up || nodes_.empty()) return;
  std::set<int> alloc(nodes_.begin(), nodes_.end());
  if (alloc != running_) StartRestart(/*save_checkpoint=*/!running_.empty());
}

Result<ScaleState> TrainingJob::Observe() {
  ScaleState s;
  s.current = static_cast<int>(nodes_.size());
  s.ready = running();
  s.max_available = s.current + env_.cluster->FreeNodes();
  return s;
}

Status TrainingJob::Apply(int desired) {
  if (desired < 0) return Status::Error("unable to scale " + ref_.Key() + " to a negative size");
  if (done_ || !q_) return Status::Ok();  // a finished job has nothing left to size
  const int cur = static_cast<int>(nodes_.size());
  if (desired == cur) return Status::Ok();
  Advance();
  bool lost = false;
  if (desired > cur) {
    applying_ = true;
    auto ids = env_.cluster->Allocate(this, env_.name, desired - cur);
    applying_ = false;
    if (!ids.ok()) return ids.status().Wrap("unable to scale " + ref_.Key());
    nodes_.insert(nodes_.end(), ids->begin(), ids->end());
  } else {
    int to_drop = cur - desired;
    // Nodes still provisioning go first: they hold no part of the job.
    for (bool up_pass : {false, true}) {
      for (int i = static_cast<int>(nodes_.size()) - 1; i >= 0 && to_drop > 0; --i) {
        const int id = nodes_[i];
        if (env_.cluster->IsUp(id) != up_pass) continue;
        env_.cluster->Release(id);
        lost = running_.erase(id) > 0 || lost;
        nodes_.erase(nodes_.begin() + i);
        --to_drop;
      }
    }
  }
  bool replacement = false;
  for (const auto& f : failures_) {
    replacement = replacement || (f.recovered_s < 0 && desired > cur && desired <= f.size_before);
  }
  rescales_.push_back({SinceEpochSeconds(Now()), cur, desired, replacement});
  Reconcile(lost);
  UpdateRates();
  Reschedule();
  CheckRecovered();
  return Status::Ok();
}

void TrainingJob::OnNodeUp(int node) {
  (void)node;
  if (applying_ || done_) return;
  Advance();
  Reconcile(false);
  UpdateRates();
  Reschedule();
  CheckRecovered();
}

void TrainingJob::OnNodeFailed(int node) {
  if (done_) return;
  Advance();
  const int before = static_cast<int>(nodes_.size());
  nodes_.erase(std::remove(nodes_.begin(), nodes_.end(), node), nodes_.end());
  failures_.push_back({SinceEpochSeconds(Now()), node, before});
  const bool member = running_.erase(node) > 0;
  if (member) {
    if (phase_ == Phase::kCompute && cfg_.checkpoint_every_steps > 0) {
      const double every = static_cast<double>(cfg_.checkpoint_every_steps);
      const double ckpt = std::floor(steps_ / every + kEps) * every;
      const double before_steps = steps_;
      steps_ = std::max(phase_start_steps_, std::min(steps_, ckpt));
      samples_lost_ += (before_steps - steps_) * cfg_.global_batch;
      phase_done_ = steps_ - phase_start_steps_;
    }
    // A dead member cannot take part in a checkpoint: restore from the last one.
    StartRestart(/*save_checkpoint=*/false);
  }
  UpdateRates();
  Reschedule();
  CheckRecovered();
}

void TrainingJob::OnTimer(uint64_t gen) {
  if (gen != gen_ || done_) return;
  Advance();
  if (restarting_ && Now() >= restart_end_) {
    restarting_ = false;
    Reconcile(false);  // nodes that came up during the restart join now
  }
  while (!restarting_ && !done_ && !running_.empty() &&
         phase_total_ - phase_done_ <= kEps * std::max(1.0, phase_total_)) {
    NextPhase();
  }
  UpdateRates();
  Reschedule();
  CheckRecovered();
}

void TrainingJob::UpdateRates() {
  const double mem = env_.cluster->config().gpu_memory_gb;
  if (done_ || running_.empty()) {
    rates_ = PhaseRates{};
  } else if (restarting_) {
    rates_ = RestartRates(cfg_, mem);
  } else {
    rates_ = RatesFor(cfg_, phase_, static_cast<int>(running_.size()), gpus_per_node(), mem);
  }
  const TimePoint now = Now();
  Segment s{now, phase_, restarting_, running(), rates_, steps_};
  if (!segments_.empty() && segments_.back().t0 == now) {
    segments_.back() = s;
  } else {
    segments_.push_back(s);
  }
  // Scrapes average over the last interval before now; keep a little more than that.
  const TimePoint keep = now - Seconds(3 * env_.scrape_interval_s);
  while (segments_.size() > 2 && segments_[1].t0 <= keep) segments_.pop_front();
}

void TrainingJob::Reschedule() {
  const uint64_t gen = ++gen_;
  if (done_) return;
  TimePoint at;
  if (restarting_) {
    at = restart_end_;
  } else if (!running_.empty() && rates_.progress_per_s > 0) {
    const double left = std::max(phase_total_ - phase_done_, 0.0) / rates_.progress_per_s;
    // Saturating: a phase longer than int64 nanoseconds ends "never", not at a wrapped time.
    at = AddSaturating(Now(), Duration(SaturatingToInt64(std::ceil(left * 1e9))));
  } else {
    return;  // waiting for nodes
  }
  q_->At(at, [this, gen] { OnTimer(gen); });
}

void TrainingJob::CheckRecovered() {
  if (restarting_) return;
  for (auto& f : failures_) {
    if (f.recovered_s < 0 && static_cast<int>(running_.size()) >= f.size_before) {
      f.recovered_s = SinceEpochSeconds(Now()) - f.t_s;
      f.replaced = true;
    }
  }
}

}  // namespace aiscale::sim
