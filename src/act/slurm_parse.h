// Parsers for what Slurm's commands print: `squeue --json` / `sinfo --json` (Slurm 22.05,
// openapi v0.0.38 shapes) and the text fallbacks `squeue -h -o '%i|%T|%N|%j|%k'` and
// `sinfo -h -N -o '%N|%o|%T|%P'`, plus the job tag aiscale puts in a job's comment.
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
};

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text);
// Lines of `squeue -h -o '%i|%T|%N|%j|%k'`; the comment is the rest of the line (it may hold
// '|'); "(null)" means none.
Result<std::vector<SlurmJob>> ParseSqueueText(std::string_view text);
Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text);
// Lines of `sinfo -h -N -o '%N|%o|%T|%P'`; %T is the long state ("idle", "drained",
// "idle*" when not responding); %P marks the default partition with a '*'.
Result<std::vector<SlurmNode>> ParseSinfoText(std::string_view text);

// Whether a job counts toward a workload's size: waiting for or holding a node.
bool JobIsActive(const SlurmJob& job);  // PENDING, CONFIGURING, RUNNING (and REQUEUED, RESIZING)
bool JobIsRunning(const SlurmJob& job);

// The tag aiscale gives replica `replica` of workload `workload`: "aiscale:<workload>:<i>".
std::string JobTag(const std::string& workload, int replica);
// The replica index of a job tagged for `workload`; nullopt when the comment is not its tag.
std::optional<int> ParseJobTag(const std::string& comment, const std::string& workload);

// Idle nodes of `partition` that can take a job now (empty partition: all partitions).
int CountIdleNodes(const std::vector<SlurmNode>& nodes, const std::string& partition);

}  // namespace aiscale::act
