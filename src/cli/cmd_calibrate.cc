// aiscale calibrate --config FILE --events FILE [--workload NAME] [--store FILE] [-o OUT]
// [--no-simulate] [--unfinished]: turns a real training run into a simulator scenario and says how
// well the simulator then predicts that run.
//
// Reads the job's events log (examples/elastic/train.py --events; the training engine
// contract) and the workload's decisions from the store `aiscale run` wrote (spec.store of the
// controller config, or --store), fits the job (sim/calibrate.h), writes a Scenario with the
// workload's own policy and bounds (to OUT, or stdout), then runs the simulator on it with that
// policy and prints predicted vs real: rescales, time per phase, job time, node-hours, with the
// error. Exit status: 0 written, 1 an error (unreadable input, no finished run), 2 usage.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "cli/commands.h"
#include "cli/controller_config.h"
#include "core/bounded_file.h"
#include "core/config/config_node.h"
#include "sim/calibrate.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#include "store/sqlite_store.h"

namespace aiscale::cli {
namespace {

// More decisions than any run holds: Recent() returns all of them.
constexpr size_t kAllDecisions = 10'000'000;

struct CalibrateFlags {
  std::string config, events, workload, store, out;
  bool simulate = true;
  bool unfinished = false;
};

int Usage(std::ostream& os, int code) {
  os << "usage: aiscale calibrate --config FILE --events FILE [--workload NAME] [--store FILE]\n"
        "                         [-o OUT] [--no-simulate] [--unfinished]\n\n"
        "Fits a simulator scenario to a real training run: throughput by world size, phase\n"
        "lengths and restart cost from the job's events log, rescales and allocated replicas\n"
        "from the decisions in the store (spec.store of the controller config, or --store).\n"
        "Writes the scenario to OUT (default: stdout), then simulates it with the workload's\n"
        "policy and prints predicted vs real with the error.\n"
        "  --unfinished  calibrate a run that never logged `done` up to its last event\n"
        "Exit status: 0 written, 1 an error, 2 usage.\n";
  return code;
}

bool ParseFlags(const Args& args, CalibrateFlags& f) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string* dst = a == "--config" || a == "-c" ? &f.config
                       : a == "--events"            ? &f.events
                       : a == "--workload"          ? &f.workload
                       : a == "--store"             ? &f.store
                       : a == "-o" || a == "--out"  ? &f.out
                                                    : nullptr;
    if (a == "--no-simulate") {
      f.simulate = false;
    } else if (a == "--unfinished") {
      f.unfinished = true;
    } else if (dst == nullptr || i + 1 >= args.size()) {
      std::cerr << "aiscale calibrate: " << (dst ? a + " needs a value" : "unexpected '" + a + "'")
                << "\n";
      return false;
    } else {
      *dst = args[++i];
    }
  }
  if (f.config.empty() || f.events.empty()) {
    std::cerr << "aiscale calibrate: needs --config and --events\n";
    return false;
  }
  return true;
}

// What the run's controller config says about the workload.
struct Setup {
  ControllerConfig cfg;
  size_t index = 0;  // of the workload in cfg.workloads
  std::string policy_yaml;
  const WorkloadSpec& workload() const { return cfg.workloads[index]; }
};

Result<Setup> ReadSetup(const CalibrateFlags& f) {
  config::ConfigErrors errors;
  const config::ConfigNode root = config::LoadConfigFile(f.config, errors);
  auto cfg = errors.empty() ? ParseControllerConfig(root)
                            : Result<ControllerConfig>(Status::Invalid("unreadable"));
  if (!cfg.ok()) {
    return Status::Invalid("unable to read controller config " + f.config + ":\n" +
                           errors.ToStatus().message());
  }
  Setup s{*std::move(cfg), 0, ""};
  bool found = false;
  for (size_t i = 0; i < s.cfg.workloads.size(); ++i) {
    const WorkloadSpec& w = s.cfg.workloads[i];
    if (f.workload.empty() ? s.cfg.workloads.size() == 1
                           : (w.ref.name == f.workload || w.ref.Key() == f.workload)) {
      s.index = i;
      found = true;
    }
  }
  if (!found) {
    return Status::NotFound(f.workload.empty()
                                ? f.config + " has several workloads: name one with --workload"
                                : "no workload '" + f.workload + "' in " + f.config);
  }
  for (const YAML::Node& w : root.raw()["spec"]["workloads"]) {
    if (w["name"] && w["name"].Scalar() == s.workload().ref.name) {
      YAML::Emitter e;
      e << YAML::Flow << w["policy"];
      s.policy_yaml = e.c_str();
    }
  }
  return s;
}

Result<std::vector<sim::TickRecord>> ReadTicks(const Setup& s, const CalibrateFlags& f) {
  const std::string path = f.store.empty() ? s.cfg.store_path : f.store;
  if (path.empty()) return Status::NotFound("no store: " + f.config + " has no spec.store");
  ASSIGN_OR_RETURN(auto store, store::SqliteStore::Open(path));
  ASSIGN_OR_RETURN(std::vector<Decision> ds, store->Recent(s.workload().ref.Key(), kAllDecisions));
  std::vector<sim::TickRecord> ticks;
  for (const Decision& d : ds) {
    const double t = std::chrono::duration<double>(d.wall.time_since_epoch()).count();
    ticks.push_back({t, d.current, d.action == Action::kScaled, d.constrained});
  }
  return ticks;
}

std::string Fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void PrintMeasured(const sim::Calibration& c, size_t ticks, std::ostream& os) {
  auto list = [](const std::vector<double>& v) {
    std::string s;
    for (double x : v) s += (s.empty() ? "" : ", ") + Fixed(x, 1);
    return s.empty() ? std::string("none") : s;
  };
  os << "calibrated from " << ticks << " decisions and the events log (" << c.skipped_lines
     << " unreadable lines skipped)\n";
  os << "samples/s by world size:";
  for (const auto& [n, v] : c.samples_per_s) {
    os << "  " << n << ": measured " << Fixed(v, 1) << ", model "
       << Fixed(c.ModelSamplesPerS(n), 1);
  }
  os << "\nload " << Fixed(c.load_s, 1) << " s; eval " << Fixed(c.eval_serial_s, 1) << " s + "
     << Fixed(c.eval_parallel_s, 1) << " s / world size; restart (no progress) "
     << Fixed(c.restart_gap_s, 1) << " s; grow decision -> last old step "
     << Fixed(c.grow_lead_s, 1) << " s\n";
  os << "restart cost, decision -> first step at the new size: grow [" << list(c.grow_latency_s)
     << "] s, shrink [" << list(c.shrink_latency_s) << "] s\n";
}

Status PredictAndCompare(const std::string& yaml, const std::string& file,
                         const sim::Calibration& c, std::ostream& os) {
  ASSIGN_OR_RETURN(sim::Scenario s, sim::ParseScenario(yaml, file));
  ASSIGN_OR_RETURN(auto runs, s.Runs({s.workloads[0].spec.pipeline.name}));
  ASSIGN_OR_RETURN(sim::RunResult r, sim::RunPolicy(s, runs[0], sim::RunOptions{}));
  const report::WorkloadSummary& summary = r.workloads[0].summary;
  os << "predicted (simulator, policy " << r.policy << ") vs real:\n";
  os << "  what                  predicted        real    error\n";
  for (const sim::FidelityRow& row : sim::CompareWithRun(c.real, summary)) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-18s %12.3f %11.3f  %+6.1f%%\n", row.what.c_str(),
                  row.predicted, row.real, 100 * row.error);
    os << line;
  }
  if (!summary.training || !summary.training->completed) {
    os << "  (the simulated job did not finish)\n";
  }
  return Status::Ok();
}

Status RunCalibrate(const CalibrateFlags& f) {
  ASSIGN_OR_RETURN(Setup setup, ReadSetup(f));
  ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(f.events, kEventsFileLimit));
  ASSIGN_OR_RETURN(std::vector<sim::TickRecord> ticks, ReadTicks(setup, f));
  auto cal = sim::Calibrate(sim::ParseJobEvents(text), ticks, {f.unfinished});
  if (!cal.ok())
    return Status::Invalid("unable to calibrate from " + f.events + ": " + cal.status().message());
  sim::ScenarioFrame frame;
  frame.name = setup.workload().ref.name + "-calibrated";
  frame.workload = setup.workload().ref.name;
  frame.min_replicas = setup.workload().min_replicas;
  frame.max_replicas = setup.workload().max_replicas;
  frame.control_period_s = setup.cfg.period_s;
  frame.policy_yaml = setup.policy_yaml;
  const std::string yaml = sim::ScenarioYaml(*cal, frame);
  std::ostream& report = f.out.empty() ? std::cerr : std::cout;
  if (f.out.empty()) {
    std::cout << yaml;
  } else {
    std::ofstream out(f.out);
    out << yaml;
    if (!out.flush()) return Status::Internal("unable to write " + f.out);
    report << "wrote " << f.out << "\n";
  }
  PrintMeasured(*cal, ticks.size(), report);
  if (!cal->finished) report << "the run did not finish: its job ends at the samples it reached\n";
  if (!f.simulate) return Status::Ok();
  return PredictAndCompare(yaml, f.out.empty() ? "<calibrated>" : f.out, *cal, report);
}

}  // namespace

int Calibrate(const Args& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") return Usage(std::cout, 0);
  }
  CalibrateFlags f;
  if (!ParseFlags(args, f)) return Usage(std::cerr, 2);
  const Status st = RunCalibrate(f);
  if (!st.ok()) {
    std::cerr << "aiscale calibrate: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace aiscale::cli
