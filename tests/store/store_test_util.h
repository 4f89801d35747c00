// Helpers shared by the store tests: a fully populated Decision and a unique temp path.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/decision.h"

namespace aiscale::testing {

// A decision with every field set to something distinct, so a codec that drops or mixes up
// a field shows in a comparison of ToJson output.
inline Decision FullDecision(const std::string& workload, double t_s, int seq) {
  Decision d;
  d.workload = workload;
  d.policy = "static";
  d.at = TimePoint(Seconds(t_s) + Duration(seq));  // odd nanoseconds on purpose
  d.current = 3 + seq;
  d.ready = 2 + seq;
  d.inputs.push_back({"gpu_util", SignalStatus::kOk, 61.5, 123.0, 2, ""});
  d.inputs.push_back({"queue_len", SignalStatus::kStale, 0, 0, 0, "all 1 values older than 45 s"});
  d.inputs.push_back({"kv_cache_usage", SignalStatus::kFetchFailed, 0, 0, 0, "timeout"});
  d.recommendation.desired = 5 + seq;
  d.recommendation.valid = seq % 2 == 0;
  d.recommendation.rule = "ratio";
  d.recommendation.reason = "usage 61.5 over target 50";
  // Ordered by name: a JSON object gives them back that way.
  d.recommendation.facts = {{"ratio", 1.23}, {"target", 50}};
  d.stabilized = 4 + seq;
  d.stabilize_reason = "window max";
  d.constrained = 4 + seq;
  d.constrain_reason = "capped at max_replicas 8";
  d.action = seq % 3 == 0 ? Action::kScaled : Action::kNone;
  d.action_detail = "3 -> 4";
  return d;
}

// A fresh directory under the gtest temp dir, unique per call within and across processes.
inline std::string FreshTempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  const auto dir =
      std::filesystem::path(::testing::TempDir()) /
      ("aiscale_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace aiscale::testing
