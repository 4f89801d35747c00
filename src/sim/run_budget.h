// RunBudget: the documented limits on what one simulation run may allocate or generate
// (docs/limits.md), checked at validate time where they can be computed from the scenario and
// enforced during the run otherwise, so any input ends in a bounded time with a clear message.
//
// Why: every field has a lower bound, and these are the upper ones; a scenario that passes
// `aiscale validate` cannot make `simulate` allocate per node up front past memory, generate
// more requests than a run can replay, or loop on an interval that rounds to 0 ns.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aiscale::sim {

// Cluster size: a record per node and a name per GPU are allocated when a run starts.
inline constexpr int kMaxClusterNodes = 100'000;
inline constexpr int kMaxGpusPerNode = 64;
inline constexpr int64_t kMaxClusterGpus = 1'000'000;

// Policies one scenario compares: each is a run of the whole scenario, within the budget below.
inline constexpr int kMaxComparedPolicies = 64;

// Per run (one policy of one scenario).
inline constexpr uint64_t kMaxEventsPerRun = 50'000'000;      // event-queue events
inline constexpr int64_t kMaxControlTicksPerRun = 1'000'000;  // duration / control_period
inline constexpr int64_t kMaxTimelinePoints = 200'000;        // duration / report_interval
inline constexpr int64_t kMaxScrapesPerRun = 5'000'000;       // duration / scrape_interval
inline constexpr double kMaxExpectedFailures = 100'000;       // rate x nodes x hours
// Requests per workload (after rate_multiplier, within the trace's window). A run replays them
// once per compared policy plus once for the oracle, at about 10 us each.
inline constexpr int64_t kMaxRequestsPerWorkload = 500'000;
// Requests arriving within one second of each other: the oracle sizes each burst by replaying
// it at many sizes, which grows faster than linearly with the burst.
inline constexpr int64_t kMaxRequestsPerSecond = 20'000;
// The inference oracle's intervals, from 0 to the last arrival (after time_compression): one
// entry each. A compression below 1 stretches arrivals; past this they are refused when the
// scenario is read (a stretch past the int64 range once allocated until memory ran out).
inline constexpr int64_t kMaxOracleIntervals = 1'000'000;

// Training-job sizes: each epoch boundary is a phase the oracle plans over.
inline constexpr int kMaxEpochs = 100'000;
inline constexpr double kMaxTrainingSteps = 1e12;
// At least one optimizer step (total_samples >= global_batch): less never reaches an epoch's
// end, and the job's phase scheduler could not finish it.
inline constexpr double kMinTrainingSteps = 1;
inline constexpr double kMaxGlobalBatch = 1e7;
// The training oracle's exact search over phases (load, compute, eval between epochs): a job
// with more phases runs and is reported without an oracle (its summary says why).
inline constexpr size_t kMaxOraclePhases = 100;

}  // namespace aiscale::sim
