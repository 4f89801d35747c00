// aiscale calibrate --config FILE --events FILE [--workload NAME] [--store FILE | --decisions
// FILE] [--run ID] [-o OUT] [--no-simulate] [--unfinished]: turns a real training run into a
// simulator scenario and says how well the simulator then predicts that run.
//
// Reads one run of the job's events log (examples/elastic/train.py --events; the training
// engine contract; --run names it, else the last) and the workload's decisions made during that
// run, from the store `aiscale run` wrote (spec.store of the controller config, or --store) or a
// JSON-lines decision log (--decisions), fits the job (sim/calibrate.h), checks that the
// scenario validates, writes it with the workload's own policy and bounds (to OUT, or stdout),
// then runs the simulator on it with that policy and prints predicted vs real: rescales, time
// per phase, job time, node-hours, with the error. A store that does not exist, holds no
// decision of the workload, or none during the run, is an error: calibrate never calibrates
// from another run's decisions. Exit status: 0 written, 1 an error, 2 usage.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "cli/calibrate_input.h"
#include "cli/commands.h"
#include "cli/controller_config.h"
#include "core/bounded_file.h"
#include "core/config/config_node.h"
#include "sim/calibrate.h"
#include "sim/runner.h"
#include "sim/scenario.h"

namespace aiscale::cli {
namespace {

struct CalibrateFlags {
  std::string config, events, workload, store, decisions, run, out;
  bool simulate = true;
  bool unfinished = false;
};

int CalibrateUsage(std::ostream& os, int code) {
  os << "usage: aiscale calibrate --config FILE --events FILE [--workload NAME]\n"
        "                         [--store FILE | --decisions FILE] [--run ID] [-o OUT]\n"
        "                         [--no-simulate] [--unfinished]\n\n"
        "Fits a simulator scenario to one real training run: throughput by world size, phase\n"
        "lengths and restart cost from the job's events log, rescales and allocated replicas\n"
        "from the workload's decisions made during that run, in the store (spec.store of the\n"
        "controller config, or --store) or a JSON-lines decision log (--decisions).\n"
        "Writes the scenario to OUT (default: stdout), then simulates it with the workload's\n"
        "policy and prints predicted vs real with the error.\n"
        "  --run ID      the run of the events log to read (its events' `run`); default: the last\n"
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
                       : a == "--decisions"         ? &f.decisions
                       : a == "--run"               ? &f.run
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
  if (!f.store.empty() && !f.decisions.empty()) {
    std::cerr << "aiscale calibrate: --store and --decisions name the same thing: give one\n";
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
      // As written: flow (one line) or block (lines, which ScenarioYaml indents).
      YAML::Emitter e;
      e << w["policy"];
      s.policy_yaml = e.c_str();
    }
  }
  return s;
}

Result<RunDecisions> ReadDecisions(const Setup& s, const CalibrateFlags& f) {
  const std::string workload = s.workload().ref.Key();
  if (!f.decisions.empty()) return ReadDecisionLog(f.decisions, workload);
  if (!f.store.empty()) return ReadStoreDecisions(f.store, workload);
  if (s.cfg.store_path.empty()) {
    return Status::NotFound("no decisions: " + f.config +
                            " has no spec.store; give --store or --decisions");
  }
  return ReadStoreDecisions(s.cfg.store_path, workload);
}

std::string Fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void PrintMeasured(const sim::Calibration& c, std::ostream& os) {
  auto list = [](const std::vector<double>& v) {
    std::string s;
    for (double x : v) s += (s.empty() ? "" : ", ") + Fixed(x, 1);
    return s.empty() ? std::string("none") : s;
  };
  os << "calibrated from " << c.decisions_in_run << " decisions and the events log"
     << (c.run.empty() ? "" : " (run " + c.run + ")") << " (" << c.skipped_lines
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
  for (const std::string& n : c.not_determined) os << "not determined by this run: " << n << "\n";
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

// The scenario for `cal`, checked by the simulator's own parser before anything is written.
Result<std::string> CalibratedScenario(const Setup& setup, const sim::Calibration& cal) {
  sim::ScenarioFrame frame;
  frame.name = setup.workload().ref.name + "-calibrated";
  frame.workload = setup.workload().ref.name;
  frame.min_replicas = setup.workload().min_replicas;
  frame.max_replicas = setup.workload().max_replicas;
  frame.control_period_s = setup.cfg.period_s;
  frame.policy_yaml = setup.policy_yaml;
  std::string yaml = sim::ScenarioYaml(cal, frame);
  auto parsed = sim::ParseScenario(yaml, "<calibrated>");
  if (!parsed.ok()) {
    return Status::Internal("the calibrated scenario does not validate, so it was not written " +
                            std::string("(a bug in calibrate): ") + parsed.status().message());
  }
  return yaml;
}

Status RunCalibrate(const CalibrateFlags& f) {
  ASSIGN_OR_RETURN(Setup setup, ReadSetup(f));
  ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(f.events, kEventsFileLimit));
  ASSIGN_OR_RETURN(RunDecisions decisions, ReadDecisions(setup, f));
  auto cal = sim::Calibrate(sim::ParseJobEvents(text), decisions.ticks, {f.unfinished, f.run});
  if (!cal.ok())
    return Status::Invalid("unable to calibrate from " + f.events + ": " + cal.status().message());
  if (cal->decisions_in_run == 0) {
    return Status::NotFound(NoDecisionsInRun(decisions, *cal, setup.workload().ref.Key()));
  }
  ASSIGN_OR_RETURN(const std::string yaml, CalibratedScenario(setup, *cal));
  std::ostream& report = f.out.empty() ? std::cerr : std::cout;
  if (f.out.empty()) {
    std::cout << yaml;
  } else {
    std::ofstream out(f.out);
    out << yaml;
    if (!out.flush()) return Status::Internal("unable to write " + f.out);
    report << "wrote " << f.out << "\n";
  }
  PrintMeasured(*cal, report);
  if (!cal->finished) report << "the run did not finish: its job ends at the samples it reached\n";
  if (!f.simulate) return Status::Ok();
  return PredictAndCompare(yaml, f.out.empty() ? "<calibrated>" : f.out, *cal, report);
}

}  // namespace

int Calibrate(const Args& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") return CalibrateUsage(std::cout, 0);
  }
  CalibrateFlags f;
  if (!ParseFlags(args, f)) return CalibrateUsage(std::cerr, 2);
  const Status st = RunCalibrate(f);
  if (!st.ok()) {
    std::cerr << "aiscale calibrate: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace aiscale::cli
