// Parsers for what Slurm's commands print: `squeue --json` / `sinfo --json` (Slurm 22.05,
// openapi v0.0.38 shapes) and the text fallbacks `squeue -h -o '%i|%T|%N|%j|%k'` and
// `sinfo -h -N -o '%N|%o|%T|%P|%G'`, the GPUs in a node's gres, plus the job tag aiscale puts in
// a job's comment.
//
// Pure functions, no I/O, thread-safe. Errors are kInvalid (the output is not what Slurm
// prints) or kUnavailable (Slurm answered with an error, e.g. the controller is down: 22.05's
// `squeue --json` then exits 0 with an "errors" entry and no jobs).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace aiscale::act {

// One job as squeue shows it.
struct SlurmJob {
  std::string id;       // "42"
  std::string name;     // --job-name
  std::string state;    // PENDING, RUNNING, COMPLETING, CANCELLED, FAILED, ...
  std::string nodes;    // "node1" once allocated; empty while pending
  std::string comment;  // --comment
  std::string reason;   // state reason: "Resources", "Priority", "None"
};

// One node as sinfo shows it, in one partition.
struct SlurmNode {
  std::string name;          // "node1"
  std::string address;       // NodeAddr: where its services can be reached
  std::string state;         // base state, lower case: idle, allocated, mixed, down, ...
  bool unavailable = false;  // drained, draining, down, not responding, reserved...: takes no job
  std::vector<std::string> partitions;
  int gpus = 0;  // GPUs its gres declares (gpu:4, gpu:a100:4(S:0-1)); 0: none
  // What keeps it from jobs beyond its state, as shown after it: "+drain" (JSON state flags),
  // "*" (the text format's not-responding suffix); empty when nothing.
  std::string flags;
};

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text);
// Lines of `squeue -h -o '%i|%T|%N|%j|%k'`; the comment is the rest of the line (it may hold
// '|'); "(null)" means none.
Result<std::vector<SlurmJob>> ParseSqueueText(std::string_view text);
Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text);
// Lines of `sinfo -h -N -o '%N|%o|%T|%P|%G'` (the %G column may be left out); %T is the long
// state ("idle", "drained", "idle*" when not responding); %P marks the default partition with a
// '*'; %G is the gres, "(null)" when none.
Result<std::vector<SlurmNode>> ParseSinfoText(std::string_view text);
// The GPUs a gres string declares: the counts of its gpu entries, comma-separated, each
// gpu[:type][:count][(socket binding)] ("gpu:a100:4(S:0-1),gpu:t4:2" is 6; "gpu" alone is 1;
// "mps:100" and "(null)" are 0). nullopt when a gpu entry's count is unreadable.
std::optional<int> GresGpus(std::string_view gres);

// Whether a job counts toward a workload's size: waiting for or holding a node.
// PENDING, CONFIGURING, RUNNING (and REQUEUED, RESIZING, COMPLETING: not yet in a final state)
bool JobIsActive(const SlurmJob& job);
bool JobIsRunning(const SlurmJob& job);

// The tag aiscale gives replica `replica` of workload `workload`: "aiscale:<workload>:<i>".
std::string JobTag(const std::string& workload, int replica);
// The replica index of a job tagged for `workload`; nullopt when the comment is not its tag.
std::optional<int> ParseJobTag(const std::string& comment, const std::string& workload);

// Idle nodes of `partition` that can take a job now (empty partition: all partitions).
int CountIdleNodes(const std::vector<SlurmNode>& nodes, const std::string& partition);

}  // namespace aiscale::act
