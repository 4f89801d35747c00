// SelectRun: which events of a log belong to the run Calibrate reads (calibrate.h).
#include <algorithm>

#include "sim/calibrate.h"

namespace aiscale::sim {
namespace {

struct Run {
  std::string key;  // the event's `run`, or "#N" for the N-th unnamed run
  std::vector<JobEvent> events;
};

// The runs in order of their first event. Unnamed events form a new run at a `start` that
// follows a `done` (train.py appends: a log reused by the next run continues after its done).
std::vector<Run> SplitRuns(const JobEventLog& log) {
  std::vector<Run> runs;
  int unnamed = 0;
  bool unnamed_done = false;
  for (const JobEvent& e : log.events) {
    std::string key = e.run;
    if (key.empty()) {
      if (e.ev == "start" && unnamed_done) {
        ++unnamed;
        unnamed_done = false;
      }
      if (e.ev == "done") unnamed_done = true;
      key = "#" + std::to_string(unnamed);
    }
    auto it = std::find_if(runs.begin(), runs.end(), [&](const Run& r) { return r.key == key; });
    if (it == runs.end()) it = runs.insert(runs.end(), Run{key, {}});
    it->events.push_back(e);
  }
  return runs;
}

bool Measurable(const Run& r, bool allow_unfinished) {
  const auto has = [&](const char* ev) {
    return std::any_of(r.events.begin(), r.events.end(),
                       [&](const JobEvent& e) { return e.ev == ev; });
  };
  const auto steps = std::count_if(r.events.begin(), r.events.end(),
                                   [](const JobEvent& e) { return e.ev == "step"; });
  return has("start") && steps >= 2 && (allow_unfinished || has("done"));
}

}  // namespace

Result<JobRun> SelectRun(const JobEventLog& log, const std::string& run, bool allow_unfinished) {
  std::vector<Run> runs = SplitRuns(log);
  if (runs.empty()) return JobRun{};
  if (!run.empty()) {
    for (Run& r : runs) {
      if (r.key == run) return JobRun{r.key, std::move(r.events)};
    }
    std::string known;
    for (const Run& r : runs) {
      if (r.key[0] == '#') continue;
      known += (known.empty() ? "" : ", ") + r.key;
    }
    return Status::Invalid("the events log has no run '" + run +
                           "' (its runs: " + (known.empty() ? "none named" : known) + ")");
  }
  auto pick = std::find_if(runs.rbegin(), runs.rend(),
                           [&](const Run& r) { return Measurable(r, allow_unfinished); });
  Run& r = pick != runs.rend() ? *pick : runs.back();
  return JobRun{r.key[0] == '#' ? "" : r.key, std::move(r.events)};
}

}  // namespace aiscale::sim
