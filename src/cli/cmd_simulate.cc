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
#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"

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
  bool help = false;  // --help: the usage on stdout and exit 0, not an error
};

int SimUsage(bool demo, bool help) {
  std::ostream& out = help ? std::cout : std::cerr;
  if (demo) {
    out << "usage: aiscale demo [--out DIR] [--json] [--quiet]\n"
           "  runs "
        << kDemoScenario << " (BERT-large on 100 x 8 A100): training vs static\n";
  } else {
    out << "usage: aiscale simulate FILE [--policy P]... [--out DIR] [--json] [--quiet]\n"
           "  runs the scenario once per policy (default: its `compare` list) and writes\n"
           "  report.json, report.html and decisions-<policy>.jsonl to DIR (./aiscale-demo)\n";
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

void PrintTable(const nlohmann::json& report, std::ostream& os) {
  const auto& runs = report["runs"];
  const nlohmann::json* st = nullptr;
  for (const auto& r : runs) {
    if (r.value("policy", "") == "static") st = &r;
  }
  struct Row {
    const char* label;
    const char* key;
    double scale;
    int decimals;
  };
  const std::vector<Row> training_rows = {
      {"GPU-hours", "gpu_hours", 1, 1},
      {"job completion time (h)", "completion_time_s", 1 / 3600.0, 2},
      {"mean GPU utilization", "mean_gpu_util", 1, 3},
      {"rescales", "rescales", 1, 0},
      {"rescales per hour", "rescales_per_hour", 1, 2},
      {"time to replace failed node (s)", "max_failure_replacement_s", 1, 0}};
  // Inference runs carry serving figures instead (sim/inference); show those.
  const std::vector<Row> inference_rows = {{"GPU-hours", "gpu_hours", 1, 1},
                                           {"GPU-hours / oracle", "gpu_hours_over_oracle", 1, 2},
                                           {"SLO attainment", "slo_attainment", 1, 4},
                                           {"latency p50 (s)", "latency_p50_s", 1, 2},
                                           {"latency p99 (s)", "latency_p99_s", 1, 2},
                                           {"TTFT p99 (s)", "ttft_p99_s", 1, 2},
                                           {"timed out", "timed_out", 1, 0},
                                           {"dropped", "dropped", 1, 0},
                                           {"scale events", "scale_events", 1, 0}};
  const bool inference = !runs.empty() && runs[0].value("kind", "") == "InferenceService";
  const std::vector<Row>& rows = inference ? inference_rows : training_rows;
  const int w0 = 34, w = 14;
  os << std::left << std::setw(w0) << "" << std::right;
  for (const auto& r : runs) os << std::setw(w) << r.value("policy", "");
  if (st) {
    for (const auto& r : runs) {
      if (&r != st) os << std::setw(w + 4) << (r.value("policy", "") + "/static");
    }
  }
  os << "\n";
  for (const Row& row : rows) {
    os << std::left << std::setw(w0) << row.label << std::right;
    for (const auto& r : runs)
      os << std::setw(w) << Cell(r.value(row.key, 0.0) * row.scale, row.decimals);
    if (st) {
      const double b = st->value(row.key, 0.0);
      for (const auto& r : runs) {
        if (&r == st) continue;
        const double a = r.value(row.key, 0.0);
        os << std::setw(w + 4) << (b != 0 ? Cell(a / b, 3) : std::string("-"));
      }
    }
    os << "\n";
  }
  if (inference) {
    os << "oracle (offline lower bound, perfect foresight, no cold start): "
       << Cell(runs[0].value("oracle_gpu_hours", 0.0), 1) << " GPU-hours at SLO attainment "
       << Cell(runs[0].value("oracle_attainment", 0.0), 4) << "\n";
  }
  for (const auto& r : runs) {
    if (r.contains("vs_targets") && r["vs_targets"].contains("why_not")) {
      os << "note: " << r.value("policy", "")
         << " misses targets: " << r["vs_targets"]["why_not"].get<std::string>() << "\n";
    }
  }
  for (const auto& r : runs) {
    if (r.contains("vs_static") && r["vs_static"].contains("why_not")) {
      os << "note: " << r.value("policy", "")
         << " did not beat static: " << r["vs_static"]["why_not"].get<std::string>() << "\n";
    }
  }
  for (const auto& r : runs) {
    if (r.value("cut", false)) {
      os << "note: " << r.value("policy", "") << " was cut at the duration limit ("
         << Cell(r.value("end_s", 0.0) / 3600, 1) << " h) before the job finished\n";
    }
  }
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
  auto written = sim::WriteReport(*result, f.out, &*lock);
  if (!written.ok()) {
    std::cerr << "aiscale: " << written.status().message() << "\n";
    return 1;
  }
  const nlohmann::json report = sim::ReportJson(*result);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (f.json) {
    std::cout << report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "scenario " << result->scenario << " (seed " << result->seed << ")\n\n";
    PrintTable(report, std::cout);
    if (report.contains("pool_comparison"))
      PrintPoolComparison(report["pool_comparison"], std::cout);
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
