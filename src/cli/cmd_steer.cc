// aiscale pause|resume|pin: steer a workload of a running `aiscale run` through its API (the
// mutating endpoints, which need the config's bearer token).
//   aiscale pause NAME [--direction both|down|up] [--until T]
//   aiscale resume NAME
//   aiscale pin NAME N [--until T]      aiscale pin NAME --clear
// T is a duration (30m, 2h) or an RFC 3339 UTC time. Common flags: --url URL, --token-file F.
// Prints what was recorded. Exit status: 0 done, 1 refused or an error, 2 usage.
#include <iostream>

#include "cli/api_client.h"
#include "cli/commands.h"
#include "server/html.h"

namespace aiscale::cli {
namespace {

struct SteerFlags {
  std::string verb;  // pause, resume, pin
  std::string name;
  std::string url = DefaultApiUrl();
  std::string token_file;
  nlohmann::json body = nlohmann::json::object();
  bool clear = false;
};

int SteerUsage(std::ostream& os, int code) {
  os << "usage: aiscale pause NAME [--direction both|down|up] [--until T]\n"
        "       aiscale resume NAME\n"
        "       aiscale pin NAME N [--until T]\n"
        "       aiscale pin NAME --clear\n"
        "  --until T          a duration (90s, 30m, 2h, 1d) or an RFC 3339 UTC time; default:\n"
        "                     until resumed or cleared\n"
        "  --url URL          the controller's API (default $AISCALE_URL or "
        "http://127.0.0.1:9464)\n"
        "  --token-file FILE  the bearer token (default $AISCALE_TOKEN_FILE, then $AISCALE_TOKEN)\n"
        "Exit status: 0 done, 1 refused or an error, 2 usage.\n";
  return code;
}

bool ParseFlags(const Args& args, SteerFlags& f) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--url" && has_value) {
      f.url = args[++i];
    } else if (a == "--token-file" && has_value) {
      f.token_file = args[++i];
    } else if (a == "--until" && has_value && f.verb != "resume") {
      f.body["until"] = args[++i];
    } else if (a == "--direction" && has_value && f.verb == "pause") {
      f.body["direction"] = args[++i];
    } else if (a == "--clear" && f.verb == "pin") {
      f.clear = true;
    } else if (f.name.empty() && !a.empty() && a[0] != '-') {
      f.name = a;
    } else if (f.verb == "pin" && !f.body.contains("replicas") && !a.empty() &&
               a.find_first_not_of("0123456789") == std::string::npos && a.size() <= 7) {
      f.body["replicas"] = std::stoi(a);
    } else {
      std::cerr << "aiscale " << f.verb << ": unexpected argument '" << a << "'\n";
      return false;
    }
  }
  if (f.name.empty()) {
    std::cerr << "aiscale " << f.verb << ": needs a workload NAME\n";
    return false;
  }
  if (f.verb == "pin" && f.clear == f.body.contains("replicas")) {
    std::cerr << "aiscale pin: give a replica count N, or --clear\n";
    return false;
  }
  return true;
}

int SteerCommand(const std::string& verb, const Args& args) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") return SteerUsage(std::cout, 0);
  }
  SteerFlags f;
  f.verb = verb;
  if (!ParseFlags(args, f)) return SteerUsage(std::cerr, 2);
  auto token = LoadCliToken(f.token_file);
  if (!token.ok()) {
    std::cerr << "aiscale " << verb << ": " << token.status().message() << "\n";
    return 1;
  }
  const std::string path = "/api/v1/workloads/" + server::UrlEncode(f.name) + "/" + verb;
  const std::string method = f.clear ? "DELETE" : "POST";
  const std::string body = f.clear || verb == "resume" ? "" : f.body.dump();
  auto out = ApiClient(f.url).Send(method, path, body, *token);
  if (!out.ok()) {
    std::cerr << "aiscale " << verb << ": " << out.status().message() << "\n";
    return 1;
  }
  std::cout << (*out).value("workload", f.name) << ": " << (*out).value("message", "done") << "\n";
  return 0;
}

}  // namespace

int Pause(const Args& args) { return SteerCommand("pause", args); }
int Resume(const Args& args) { return SteerCommand("resume", args); }
int Pin(const Args& args) { return SteerCommand("pin", args); }

}  // namespace aiscale::cli
