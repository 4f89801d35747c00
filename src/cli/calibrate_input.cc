#include "cli/calibrate_input.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "core/bounded_file.h"
#include "core/decision_codec.h"
#include "core/time.h"
#include "store/sqlite_store.h"

namespace aiscale::cli {
namespace {

// More decisions than any run holds: Recent() returns all of them.
constexpr size_t kAllDecisions = 10'000'000;
constexpr FileLimit kDecisionLogLimit{"decision log", 1ull << 30, 0};

Result<RunDecisions> ToTicks(const std::vector<Decision>& ds, std::string source,
                             const std::string& workload) {
  RunDecisions out;
  out.source = std::move(source);
  for (const Decision& d : ds) {
    if (d.wall.time_since_epoch().count() == 0) {
      return Status::Invalid(out.source + " holds decisions of " + workload +
                             " without wall time (a simulator's log?): calibrate needs those " +
                             "of a real run (aiscale run)");
    }
    const double t = ToSeconds(d.wall.time_since_epoch());
    out.ticks.push_back({t, d.current, d.action == Action::kScaled, d.constrained});
  }
  if (out.ticks.empty()) {
    return Status::NotFound(out.source + " holds no decision of workload " + workload);
  }
  std::stable_sort(out.ticks.begin(), out.ticks.end(),
                   [](const sim::TickRecord& a, const sim::TickRecord& b) { return a.t < b.t; });
  return out;
}

std::string Stamp(double t) { return FormatWallTime(WallTime(Duration(std::llround(t * 1e9)))); }

}  // namespace

Result<RunDecisions> ReadStoreDecisions(const std::string& path, const std::string& workload) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Status::NotFound("store " + path +
                            " does not exist (calibrate reads the store of a run; it never " +
                            "creates one)");
  }
  if (!S_ISREG(st.st_mode)) return Status::Invalid("store " + path + " is not a regular file");
  ASSIGN_OR_RETURN(auto store, store::SqliteStore::Open(path));
  ASSIGN_OR_RETURN(std::vector<Decision> ds, store->Recent(workload, kAllDecisions));
  return ToTicks(ds, "store " + path, workload);
}

Result<RunDecisions> ReadDecisionLog(const std::string& path, const std::string& workload) {
  ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, kDecisionLogLimit));
  std::vector<Decision> ds;
  size_t pos = 0;
  for (int line = 1; pos < text.size(); ++line) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view row(text.data() + pos, end - pos);
    pos = end + 1;
    if (row.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto j = nlohmann::json::parse(row, nullptr, /*allow_exceptions=*/false);
    Result<Decision> d =
        j.is_discarded() ? Result<Decision>(Status::Invalid("not JSON")) : DecisionFromJson(j);
    if (!d.ok()) {
      return Status::Invalid(path + ":" + std::to_string(line) +
                             ": not a decision: " + d.status().message());
    }
    if (d->workload == workload) ds.push_back(*std::move(d));
  }
  return ToTicks(ds, "decision log " + path, workload);
}

std::string NoDecisionsInRun(const RunDecisions& d, const sim::Calibration& c,
                             const std::string& workload) {
  std::string s = d.source;
  s.append(" holds ").append(std::to_string(d.ticks.size())).append(" decisions of ");
  s.append(workload).append(" from ").append(Stamp(d.ticks.front().t)).append(" to ");
  s.append(Stamp(d.ticks.back().t)).append(", none during the run in the events log (");
  s.append(c.run.empty() ? "" : "run " + c.run + ", ").append(Stamp(c.start_t)).append(" to ");
  s.append(Stamp(c.end_t)).append("): it is another run's; name this run's store or log");
  return s;
}

}  // namespace aiscale::cli
