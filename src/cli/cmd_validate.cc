// aiscale validate FILE...: checks each config or scenario file and lists every error as
// file:line:column: path: message. Exit 0 when all files are valid, 1 when any has an error,
// 2 on a usage error.
#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "cli/validators.h"
#include "core/config/config_node.h"

namespace aiscale::cli {
namespace {

int Usage(std::ostream& os, int code) {
  os << "usage: aiscale validate FILE...\n\n"
        "Checks each file's header (apiVersion "
     << config::kApiVersion << ", kind one of";
  for (const auto& k : KnownKinds()) os << " " << k;
  os << ") and its spec, and prints every error as file:line:column: path: message.\n"
        "Exit status: 0 all valid, 1 errors found, 2 usage.\n";
  return code;
}

// Returns true when the file is valid; prints its errors or "FILE: ok".
bool ValidateFile(const std::string& path) {
  config::ConfigErrors errors;
  const config::ConfigNode root = config::LoadConfigFile(path, errors);
  if (errors.empty()) {
    const std::string kind = config::CheckHeader(root, KnownKinds());
    if (errors.empty()) {
      if (Validator v = FindValidator(kind)) v(root);
    }
  }
  if (errors.empty()) {
    std::cout << path << ": ok\n";
    return true;
  }
  // Validators record errors in the order they read fields; the file's order reads better.
  std::vector<config::ConfigError> all = errors.all();
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  for (const auto& e : all) std::cout << e.ToString() << "\n";
  std::cout << path << ": " << all.size() << (all.size() == 1 ? " error" : " errors") << "\n";
  return false;
}

}  // namespace

int Validate(const Args& args) {
  if (args.empty()) return Usage(std::cerr, 2);
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") return Usage(std::cout, 0);
    if (a.size() > 1 && a[0] == '-') {
      std::cerr << "aiscale validate: unknown flag '" << a << "'\n";
      return Usage(std::cerr, 2);
    }
  }
  bool ok = true;
  for (const auto& path : args) ok = ValidateFile(path) && ok;
  return ok ? 0 : 1;
}

}  // namespace aiscale::cli
