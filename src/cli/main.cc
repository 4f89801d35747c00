// aiscale: the command-line entry point. Dispatches to a subcommand; see `aiscale help`.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/allocator_tuning.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const aiscale::cli::Args&);
  const char* help;
};

constexpr Command kCommands[] = {
    {"demo", &aiscale::cli::Demo,
     "run the built-in BERT-large training scenario: training policy vs static"},
    {"simulate", &aiscale::cli::Simulate, "run a scenario file with policies side by side"},
    {"conformance", &aiscale::cli::Conformance,
     "evaluate HPA/KPA conformance vectors: conformance hpa|kpa FILE"},
    {"run", &aiscale::cli::Run,
     "run the controller live on a ControllerConfig: run -c FILE [--dry-run] [--once]"},
    {"validate", &aiscale::cli::Validate, "check a config or scenario file and list every error"},
    {"explain", &aiscale::cli::Explain, "the last decisions of a workload in words, newest first"},
    {"calibrate", &aiscale::cli::Calibrate,
     "fit a simulator scenario to a real training run and compare its prediction"},
    {"status", &aiscale::cli::ShowStatus,
     "what a running controller is doing: status [NAME] [--watch] [--json]"},
    {"pause", &aiscale::cli::Pause, "pause a workload's scaling: pause NAME [--direction down]"},
    {"resume", &aiscale::cli::Resume, "resume a paused or pinned workload: resume NAME"},
    {"pin", &aiscale::cli::Pin, "hold a workload at N replicas: pin NAME N [--until 2h]"},
};

int Usage(std::ostream& os, int code) {
  os << "usage: aiscale COMMAND [ARGS]\n\ncommands:\n";
  for (const auto& c : kCommands) os << "  " << c.name << "\t" << c.help << "\n";
  os << "\nrun `aiscale COMMAND --help` for a command's flags\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  aiscale::TuneAllocator();
  if (argc < 2) return Usage(std::cerr, 2);
  const std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") return Usage(std::cout, 0);
  aiscale::cli::Args args(argv + 2, argv + argc);
  for (const auto& c : kCommands) {
    if (cmd == c.name) return c.run(args);
  }
  std::cerr << "aiscale: unknown command '" << cmd << "'\n";
  return Usage(std::cerr, 2);
}
