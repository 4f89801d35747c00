// ServingEngine: an inference service's data plane in virtual time: a load balancer with one
// FCFS queue, replicas that start, serve and drain, and the per-request outcome.
//
// How it advances: its own tight event loop (a heap of (time, seq, replica) entries, no
// std::function per request or per token). An LLM replica runs its batch as "segments" of
// identical decode steps and jumps straight to the next step boundary at which something
// changes (a request finishes, or newly dispatched requests join at the next boundary), so
// the cost is O(log) per request and per admission, not per token. The caller feeds arrivals
// in time order with Arrive() and moves time with AdvanceTo(); state read after AdvanceTo(t)
// is the exact state at t.
//
// Load balancing: the head of the queue goes to the least-loaded (fewest in flight, then
// lowest id) ready replica that can admit it (a free slot, and for LLMs enough free KV cache
// for input + output tokens); strict FCFS, so the head blocks those behind it. A request
// waiting longer than queue_timeout is dropped as timed out; one that could never fit a
// replica's KV cache, or arrives at a full queue, is dropped. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <queue>
#include <vector>

#include "sim/inference/replica_model.h"
#include "sim/inference/request_stats.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::inference {

struct EngineOptions {
  ReplicaModel model;
  Slo slo;
  double queue_timeout_s = 60;   // > 0
  int max_queue = 0;             // 0 = unbounded
  double window_s = 15;          // windowed signals (request_rate, p99s)
  double stats_retention_s = 0;  // completions kept for quantiles over longer spans (>= window)
  uint64_t seed = 1;             // plain-server service times
};

// kSleeping: stops taking requests and goes kAsleep when its in-flight ones are done (vLLM's
// sleep mode: weights offloaded to host memory, KV cache dropped); kAsleep: serves nothing and
// is billed at the warm tier's cost fraction; woken, it is kStarting again for the wake time.
enum class ReplicaState { kStarting, kReady, kDraining, kRetired, kSleeping, kAsleep };

// The service time a plain server gives request `q`: drawn from the seed and the request itself
// (absolute arrival time and sizes), so it does not depend on who else runs, where the request
// is served, or how a trace is cut into intervals.
int64_t PlainServiceNs(const traces::TraceRequest& q, const EngineOptions& o);

struct ReplicaView {
  int id;
  ReplicaState state;
  int in_flight;
  double kv_usage;  // 0-1 (LLM), 0 for plain
};

class ServingEngine {
 public:
  explicit ServingEngine(EngineOptions o);

  // Adds a replica, requested now, serving from ready_at_ns (>= now), or going straight to sleep
  // when ready (a warm-tier replica: loaded once, then kept asleep). Returns its id.
  int AddReplica(int64_t ready_at_ns, bool asleep_when_ready = false);
  // Puts a ready (or starting) replica to sleep: it takes no more requests and is asleep when
  // its in-flight ones finish. No-op in other states.
  void SleepReplica(int id);
  // Wakes a sleeping or asleep replica: serving again at once if it had not yet gone to sleep,
  // else from ready_at_ns (the wake time). No-op in other states.
  void WakeReplica(int id, int64_t ready_at_ns);
  // Removes a replica: one still starting is released at once; a ready one stops taking
  // requests and is retired (and stops being billed) when its in-flight requests finish.
  void RemoveReplica(int id);

  // Processes everything up to and including t (t >= now).
  void AdvanceTo(int64_t t_ns);
  // Advances to r.arrival_ns, then lets the request arrive.
  void Arrive(const traces::TraceRequest& r);

  int64_t now_ns() const { return now_; }
  // No request queued or in flight.
  bool Idle() const;
  size_t queue_len() const { return queue_.size(); }
  // Removes and returns the requests still waiting in the queue (the oracle hands them to
  // replicas of its own at an interval's end). They count as neither completed nor dropped.
  std::vector<traces::TraceRequest> TakeQueue();
  // Completions within the SLO of requests that arrived at or after `arrival_ns` (set before
  // they arrive), counted apart from stats(): the oracle's good requests of one interval when
  // an earlier interval's requests share the replicas.
  void CountFrom(int64_t arrival_ns) { count_from_ns_ = arrival_ns; }
  uint64_t counted_within_slo() const { return counted_within_slo_; }
  const RequestStats& stats() const { return stats_; }
  const EngineOptions& options() const { return o_; }

  // Replica counts by state (not retired).
  int CountState(ReplicaState s) const;
  std::vector<ReplicaView> Replicas() const;
  // Ids of live (not retired) replicas in creation order.
  const std::vector<int>& live() const { return live_; }
  // GPU busy fraction of replica `id` since the previous call for it (or since it became
  // ready); 0-1. A GPU is busy while its replica runs a step (LLM) or serves a request.
  double TakeBusyFraction(int id);
  // GPU-seconds billed so far (requested until released or drained), over all replicas.
  double GpuSeconds() const;
  // Replica-seconds in the ready (serving) state so far.
  double ReadyReplicaSeconds() const;
  // GPU-seconds spent asleep so far (part of GpuSeconds()): the warm tier's share, which is
  // priced apart.
  double AsleepGpuSeconds() const;

 private:
  struct Running {
    int64_t finish;  // LLM: step boundary index of the last token; plain: time (ns)
    int64_t arrival_ns;
    int64_t first_token_ns;
    uint32_t kv;
    bool operator>(const Running& o) const { return finish > o.finish; }
  };
  struct Replica {
    int id;
    ReplicaState state = ReplicaState::kStarting;
    int64_t requested_ns = 0, ready_ns = 0, retired_ns = -1;
    bool asleep_when_ready = false;
    int64_t asleep_since = -1, asleep_acc = 0;  // time asleep (billed at the warm fraction)
    int in_flight = 0;
    int64_t kv_used = 0;
    std::vector<traces::TraceRequest> pending;  // dispatched, joins at the next boundary
    std::priority_queue<Running, std::vector<Running>, std::greater<Running>> running;
    // LLM segment: boundaries at t0, t0 + d0, t0 + d0 + dt, ...; step index s0 at t0.
    bool stepping = false;
    int64_t t0 = 0, d0 = 0, dt = 0, s0 = 0;
    int batch = 0;
    int64_t next_event = INT64_MAX;
    uint32_t version = 0;
    // Busy accounting.
    bool busy = false;
    int64_t busy_since = 0, busy_acc = 0;
    int64_t mark_t = 0, mark_busy = 0;
    // Place in the ready-by-load lists (level = in_flight when linked, -1 when not ready).
    int level = -1, prev = -1, next = -1;
  };
  struct Event {
    int64_t t;
    uint64_t seq;
    int replica;  // -1: queue timeout check
    uint32_t version;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };

  void Schedule(Replica& r, int64_t t);
  void ScheduleTimeout();
  void Process(const Event& e);
  void OnReady(Replica& r);
  void Boundary(Replica& r);
  void BoundaryPlain(Replica& r);
  // Retires requests finished by `upto`, frees their capacity, and dispatches the queue.
  void CompleteUpTo(Replica& r, int64_t upto, bool plain);
  void StartSegment(Replica& r, int64_t step_index);
  void Dispatch();
  bool CanAdmit(const Replica& r, const traces::TraceRequest& q) const;
  void Admit(Replica& r, const traces::TraceRequest& q);
  void SetBusy(Replica& r, bool busy);
  void MaybeRetire(Replica& r);
  void MaybeSleep(Replica& r);
  void EndSleep(Replica& r);                 // closes an asleep span
  void Retire(Replica& r);                   // out of the live set, billed until now
  int64_t AsleepNs(const Replica& r) const;  // time asleep so far
  int64_t NextBoundary(const Replica& r, int64_t t) const;
  int64_t BusyNs(const Replica& r) const;
  // Ready replicas are kept in one list per in-flight count, so the least loaded is found
  // in O(1) (plus the rare KV-cache misfit) instead of scanning every replica per request.
  void Link(Replica& r);
  void Unlink(Replica& r);
  void Relevel(Replica& r);
  Replica* LeastLoaded(const traces::TraceRequest& q);

  EngineOptions o_;
  RequestStats stats_;
  int64_t now_ = 0;
  int64_t timeout_ns_;
  int64_t slo_ttft_ns_, slo_latency_ns_;
  int64_t count_from_ns_ = INT64_MAX;  // nothing counted until CountFrom
  uint64_t counted_within_slo_ = 0;
  std::vector<Replica> replicas_;  // by id, never erased (ids stay valid)
  std::vector<int> live_;
  std::deque<traces::TraceRequest> queue_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  int64_t timeout_event_at_ = INT64_MAX;
  int boundary_replica_ = -1;  // replica whose boundary is being processed
  int64_t in_flight_ = 0;
  std::vector<int> heads_;  // per in-flight count: first ready replica, -1 when none
  int min_level_ = 0;       // no ready replica has fewer in flight
};

}  // namespace aiscale::sim::inference
