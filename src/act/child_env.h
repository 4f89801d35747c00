// What a child process is started with, shared by the local engine's spawner (process.cc) and
// the Slurm command runner (slurm_cli.cc): aiscale's environment with the caller's variables
// added or replacing, and the NULL-terminated arrays execve wants. Pure, thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace aiscale::act {

// aiscale's own environment as "K=V" strings, each key in `extra` replaced by its value.
std::vector<std::string> MergedEnv(const std::vector<std::pair<std::string, std::string>>& extra);

// Pointers into `strings` (which must outlive them), then a null: argv/envp for execve.
std::vector<char*> CStrings(std::vector<std::string>& strings);

}  // namespace aiscale::act
