// `aiscale simulate FILE [--policy P]... [--out DIR] [--json]` and `aiscale demo [--out DIR]`:
// run a scenario with policies side by side, print the comparison table, write the reports.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "cli/commands.h"
#include "cli/pool_table.h"
#include "cli/sweep_table.h"
#include "cli/tenant_table.h"
#include "report/comparison.h"
#include "report/report_json.h"
#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#include "sim/sweep.h"

#ifndef AISCALE_SOURCE_DIR
#define AISCALE_SOURCE_DIR ""
#endif

namespace aiscale::cli {
namespace {

constexpr const char* kDemoScenario = "examples/demo-bert-large.yaml";

struct SimFlags {
  std::string file;
  std::vector<std::string> policies;
  std::string out = "aiscale-demo";
  bool json = false;
  bool quiet = false;
  bool sweep = false;  // --sweep: every policy over its main knob (sim/sweep.h)
  bool help = false;   // --help: the usage on stdout and exit 0, not an error
};

int SimUsage(bool demo, bool help) {
  std::ostream& out = help ? std::cout : std::cerr;
  if (demo) {
    out << "usage: aiscale demo [--out DIR] [--json] [--quiet]\n"
           "  runs "
        << kDemoScenario << " (BERT-large on 100 x 8 A100): training vs static\n";
  } else {
    out << "usage: aiscale simulate FILE [--policy P]... [--sweep] [--out DIR] [--json] [--quiet]\n"
           "  runs the scenario once per policy (default: its `compare` list) and writes\n"
           "  report.json, report.html and decisions-<policy>.jsonl to DIR (./aiscale-demo);\n"
           "  --sweep runs each compared policy over a grid of its main knob and reports\n"
           "  its cost/SLO frontier (one workload only)\n";
  }
  return help ? 0 : 2;
}

// Returns false (after printing why) on a bad flag.
bool ParseFlags(const Args& args, bool demo, SimFlags& f) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= args.size()) {
        std::cerr << "aiscale: " << a << " needs a value\n";
        return false;
      }
      dst = args[++i];
      return true;
    };
    if (a == "--out") {
      if (!value(f.out)) return false;
    } else if (a == "--policy" && !demo) {
      std::string p;
      if (!value(p)) return false;
      f.policies.push_back(p);
    } else if (a == "--sweep" && !demo) {
      f.sweep = true;
    } else if (a == "--json") {
      f.json = true;
    } else if (a == "--quiet") {
      f.quiet = true;
    } else if (a == "--help" || a == "-h") {
      f.help = true;
      return false;
    } else if (!demo && f.file.empty() && (a.empty() || a[0] != '-')) {
      f.file = a;
    } else {
      std::cerr << "aiscale: unknown argument '" << a << "'\n";
      return false;
    }
  }
  if (!demo && f.file.empty()) {
    std::cerr << "aiscale: simulate needs a scenario FILE\n";
    return false;
  }
  if (f.sweep && !f.policies.empty()) {
    std::cerr << "aiscale: --sweep runs the compare list's policies; it takes no --policy\n";
    return false;
  }
  return true;
}

// The demo scenario from the working directory (a checkout) or from the source tree this
// binary was built from.
std::string FindDemoScenario() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(kDemoScenario, ec)) return kDemoScenario;
  const fs::path built = fs::path(AISCALE_SOURCE_DIR) / kDemoScenario;
  if (std::string(AISCALE_SOURCE_DIR).size() && fs::exists(built, ec)) return built.string();
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path d = exe.parent_path(); !d.empty() && d != d.root_path(); d = d.parent_path()) {
      if (fs::exists(d / kDemoScenario, ec)) return (d / kDemoScenario).string();
    }
  }
  return kDemoScenario;  // the error then names the path looked for
}

std::string Cell(double v, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << v;
  return os.str();
}

// The report layer's comparison (the table report.html shows), then the notes.
void PrintTable(const report::Report& r, std::ostream& os) {
  const std::vector<std::string> names = r.WorkloadNames();
  if (names.size() > 1) os << "all workloads\n";
  os << report::RenderText(report::BuildComparison(r));
  for (size_t i = 0; names.size() > 1 && i < names.size(); ++i) {
    os << "\nworkload " << names[i] << "\n"
       << report::RenderText(report::BuildComparison(r, names[i]));
  }
  bool oracle = false;
  for (const auto& run : r.runs) {
    for (const auto& w : run.workloads) oracle = oracle || w.oracle.has_value();
  }
  if (oracle) {
    os << "oracle: the offline lower bound (perfect foresight of the same work; for inference, "
          "no cold start)\n";
  }
  for (const std::string& note : report::ComparisonNotes(r)) os << "note: " << note << "\n";
}

int RunSimulation(const SimFlags& f) {
  const auto wall0 = std::chrono::steady_clock::now();
  // The output folder is ours for the whole run: a second run into it fails here, at once, before
  // anything is read.
  auto lock = sim::OutputLock::Acquire(f.out);
  if (!lock.ok()) {
    std::cerr << "aiscale: " << lock.status().message() << "\n";
    return 1;
  }
  auto scenario = sim::LoadScenario(f.file);
  if (!scenario.ok()) {
    std::cerr << scenario.status().message() << "\n";
    return 1;
  }
  std::optional<report::Sweep> sweep_layout;
  if (f.sweep) {
    config::ConfigErrors errs;
    auto plan = sim::PlanSweep(config::LoadConfigFile(f.file, errs), f.file);
    if (!plan.ok()) {
      std::cerr << "aiscale: " << plan.status().message() << "\n";
      return 1;
    }
    scenario = std::move(plan->scenario);
    sweep_layout = std::move(plan->layout);
  }
  // Labels that would share a decision-log file fail now, not after the runs.
  if (auto runs = scenario->PlanRuns(f.policies); runs.ok()) {
    std::vector<std::string> labels;
    for (const auto& r : *runs) labels.push_back(r.label);
    if (Status s = sim::CheckDecisionLogNames(labels); !s.ok()) {
      std::cerr << "aiscale: " << f.file << ": " << s.message() << "\n";
      return 1;
    }
  }
  sim::RunOptions opt;
  opt.policies = f.policies;
  opt.progress_every_sim_s = 1800;
  const bool tty_progress = !f.quiet;
  if (tty_progress) {
    // On a terminal one line per run, rewritten in place; in a log, a line per quarter of
    // each run (carriage returns there would run the updates together).
    const bool terminal = isatty(fileno(stderr)) != 0;
    opt.on_progress = [terminal, last_quarter = -1](const sim::RunProgress& p) mutable {
      const double fraction = std::clamp(p.fraction, 0.0, 1.0);
      const int quarter = static_cast<int>(4 * fraction);
      if (!terminal && !p.finished && quarter == last_quarter) return;
      last_quarter = p.finished ? -1 : quarter;
      const char* start = terminal ? "\r" : "";
      if (p.finished) {
        std::fprintf(stderr, "%s  %-12s simulated %7.2f h  done\n", start, p.policy.c_str(),
                     p.sim_s / 3600);
      } else {
        std::fprintf(stderr, "%s  %-12s simulated %7.2f h  %5.1f%%%s", start, p.policy.c_str(),
                     p.sim_s / 3600, 100 * fraction, terminal ? "" : "\n");
      }
      std::fflush(stderr);
    };
    std::cerr << "aiscale: simulating " << scenario->name << " (" << f.file << ")\n";
  }
  auto result = sim::RunScenario(*scenario, opt);
  if (!result.ok()) {
    std::cerr << "aiscale: " << result.status().message() << "\n";
    return 1;
  }
  if (sweep_layout) result->sweep = sim::CollectSweep(*sweep_layout, *result);
  const report::Report built = sim::BuildReport(*result);
  auto written = sim::WriteReport(*result, built, f.out, &*lock);
  if (!written.ok()) {
    std::cerr << "aiscale: " << written.status().message() << "\n";
    return 1;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (f.json) {
    std::cout << sim::ReportJson(*result, built)
                     .dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << "scenario " << result->scenario << " (seed " << result->seed << ")\n\n";
    if (result->sweep) {
      PrintSweep(*result->sweep, std::cout);  // the frontier, not a table dozens of runs wide
    } else {
      PrintTable(built, std::cout);
    }
    if (!built.pool_comparison.is_null()) PrintPoolComparison(built.pool_comparison, std::cout);
    if (!result->tenant_comparison.is_null()) {
      PrintTenantComparison(result->tenant_comparison, std::cout);
    }
    std::cout << "\nwrote " << written->json_path << "\nwrote " << written->html_path << "\n";
    for (const auto& p : written->decision_logs) std::cout << "wrote " << p << "\n";
    std::cout << "simulated in " << Cell(wall, 2) << " s\n";
  }
  return 0;
}

}  // namespace

int Demo(const Args& args) {
  SimFlags f;
  if (!ParseFlags(args, /*demo=*/true, f)) return SimUsage(true, f.help);
  f.file = FindDemoScenario();
  return RunSimulation(f);
}

int Simulate(const Args& args) {
  SimFlags f;
  if (!ParseFlags(args, /*demo=*/false, f)) return SimUsage(false, f.help);
  return RunSimulation(f);
}

}  // namespace aiscale::cli
