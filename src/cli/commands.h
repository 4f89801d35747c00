// The aiscale subcommands. Each takes the arguments after its name and returns the exit code;
// each parses its own flags, so adding one is a new file plus a line in main.cc.
#pragma once

#include <string>
#include <vector>

namespace aiscale::cli {

using Args = std::vector<std::string>;

int Demo(const Args& args);                   // cmd_simulate.cc
int Simulate(const Args& args);               // cmd_simulate.cc
int Conformance(const Args& args);            // cmd_conformance.cc
int ConformanceHpa(const std::string& file);  // conformance_hpa.cc
int ConformanceKpa(const std::string& file);  // conformance_kpa.cc
int Validate(const Args& args);               // cmd_validate.cc
int Run(const Args& args);                    // cmd_run.cc
int Explain(const Args& args);                // cmd_explain.cc
int Calibrate(const Args& args);              // cmd_calibrate.cc
int ShowStatus(const Args& args);             // cmd_status.cc
int Pause(const Args& args);                  // cmd_steer.cc
int Resume(const Args& args);                 // cmd_steer.cc
int Pin(const Args& args);                    // cmd_steer.cc

}  // namespace aiscale::cli
