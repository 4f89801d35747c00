// LeaseElector: leader election over a coordination.k8s.io/v1 Lease, with the semantics of
// client-go's tools/leaderelection (as kube-controller-manager runs it), so several `aiscale run`
// replicas agree that exactly one of them applies.
//
// Promises: a candidate takes the Lease only when it is missing, released (holderIdentity
// empty) or unchanged for leaseDurationSeconds as timed on this process's own clock from when it
// last saw the record change (never by comparing renewTime to local wall time: clocks skew).
// Every write is optimistic on metadata.resourceVersion; a 409 means another candidate won the
// race and the next step re-reads. A leader whose renewals fail stops being leader (IsLeader()
// turns false) once renew_deadline has passed since the start of its last successful renewal,
// which is before any other candidate can see the Lease expire (renew_deadline <
// lease_duration, measured from a later instant). Release() writes holderIdentity empty with
// leaseDurationSeconds 1 (client-go's ReleaseOnCancel) so a follower takes over at its next
// step. Times come from the injected Clock; MicroTime is RFC 3339 with 6 fractional digits.
// IsLeader, Leader and identity are thread-safe; Step, TryAcquireOrRenew and Release are called
// from one thread.
//
//   auto el = MakeLeaseElector(cfg, http, clock, KubeAuthEnv::Process(), &telemetry);
//   for (;;) { (*el)->Step(); if ((*el)->IsLeader()) ...; clock.SleepUntil((*el)->NextStep()); }
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "act/kubernetes_auth.h"
#include "act/kubernetes_client.h"
#include "act/kubernetes_target.h"
#include "core/clock.h"
#include "core/config/config_node.h"
#include "core/http.h"
#include "core/result.h"
#include "core/telemetry.h"

namespace aiscale::act {

// `spec.leader_election` of a ControllerConfig. Defaults are client-go's and
// kube-controller-manager's (--leader-elect-lease-duration=15s, -renew-deadline=10s,
// -retry-period=2s).
struct LeaderElectionConfig {
  bool enabled = false;
  std::string namespace_ = "default";
  std::string name = "aiscale";
  Duration lease_duration = Seconds(15);
  Duration renew_deadline = Seconds(10);
  Duration retry_period = Seconds(2);
  std::string identity;  // empty: DefaultLeaderIdentity()
  KubeAuthConfig auth;   // as a kubernetes target's `auth:` (same defaults)

  // Reads the `leader_election` map; errors (unknown fields, renew_deadline >= lease_duration,
  // retry_period >= renew_deadline, names that are not DNS names) land at their field paths.
  static LeaderElectionConfig Parse(const config::ConfigNode& node);
};

// "<hostname>_<pid>_<8 hex digits>": unique per process, readable in the Lease.
std::string DefaultLeaderIdentity();
// A metav1.MicroTime as the API server writes it: "2026-12-03T09:10:11.123456Z".
std::string FormatMicroTime(WallTime t);
// "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}]".
std::string LeasePath(const std::string& ns, const std::string& name = "");

class LeaseElector {
 public:
  // `identity` must not be empty. `telemetry` may be null; else the gauge aiscale_leader
  // (1 leader, 0 follower) is declared and kept current.
  LeaseElector(LeaderElectionConfig cfg, std::string identity, std::unique_ptr<KubeClient> client,
               Clock& clock, Telemetry* telemetry = nullptr);

  // client-go's tryAcquireOrRenew: true when this process holds the Lease after the call.
  // Creates the Lease when missing; updates it when it is ours (renew) or free or expired
  // (acquire, leaseTransitions + 1); leaves it when another holder's lease is still valid.
  bool TryAcquireOrRenew();
  // One step of the loop: TryAcquireOrRenew, then drops leadership when the renew deadline has
  // passed without a successful renewal. Returns IsLeader().
  bool Step();
  // When the next Step is due: one retry period after the last one started while leading (a
  // renewal); while following, a retry period plus a random 0 to 1.2 of one (client-go's
  // JitterFactor for acquiring), so followers that lost a leader together do not all ask the
  // API server at the same instant. The random draws are seeded by the identity.
  TimePoint NextStep() const { return last_step_ + next_wait_; }
  // Held, and renewed less than renew_deadline ago (checked against the clock on each call).
  bool IsLeader() const;
  // The holder last seen in the Lease ("" when none or released).
  std::string Leader() const;
  const std::string& identity() const { return identity_; }
  // Why the last attempt did not acquire or renew ("" after a success), for logs.
  std::string last_error() const;
  const LeaderElectionConfig& config() const { return cfg_; }
  // Gives the Lease up if this process holds it (holderIdentity "", leaseDurationSeconds 1);
  // after it, IsLeader() is false. Ok when not held; the API's error otherwise.
  Status Release();

 private:
  // The spec this process writes when it holds the Lease, keeping acquireTime and
  // leaseTransitions when it already held it.
  nlohmann::json HolderSpec(const nlohmann::json& old_spec, bool renewing) const;
  // Remembers `lease` as the last one seen; observed_at_ moves only when its spec changed.
  void Observe(const nlohmann::json& lease);
  bool ObservedValid(TimePoint now) const;
  // PUT `lease` with `spec`; on success it becomes the observed lease and renewed_at_ = start.
  bool Update(nlohmann::json lease, nlohmann::json spec, TimePoint start);
  bool Create(TimePoint start);
  void SetLeader(bool leader, TimePoint renewed_at);
  void SetError(std::string error);

  LeaderElectionConfig cfg_;
  std::string identity_;
  std::unique_ptr<KubeClient> client_;
  Clock& clock_;
  Telemetry* telemetry_;
  std::string path_;

  nlohmann::json observed_;  // the last Lease read or written (with its resourceVersion)
  std::string observed_spec_;
  TimePoint observed_at_{};
  TimePoint last_step_{};
  Duration next_wait_;          // from last_step_ to the next step
  std::mt19937_64 jitter_rng_;  // a follower's wait, seeded by the identity

  std::atomic<bool> leader_{false};
  std::atomic<int64_t> renewed_at_ns_{0};  // start of the last successful acquire or renew
  mutable std::mutex mu_;                  // guards holder_ and last_error_
  std::string holder_;
  std::string last_error_;
};

// Resolves cfg.auth (as a kubernetes target does) and makes an elector whose API calls are
// bounded by the retry period, so a hung API server cannot hold a step past it. The identity is
// cfg.identity, else DefaultLeaderIdentity().
Result<std::unique_ptr<LeaseElector>> MakeLeaseElector(const LeaderElectionConfig& cfg,
                                                       HttpClient& http, Clock& clock,
                                                       const KubeAuthEnv& auth_env,
                                                       Telemetry* telemetry = nullptr);

}  // namespace aiscale::act
