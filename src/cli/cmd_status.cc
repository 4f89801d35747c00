// aiscale status [NAME] [--url URL] [--watch [--interval S]] [--json]: what a running
// `aiscale run` is doing, from its API. Without NAME one row per workload (as `kubectl get
// hpa`); with NAME the describe view (signals with age and source, conditions, recent
// decisions). --watch redraws every interval (2 s) until interrupted; --json prints the API's
// JSON instead. Exit status: 0 shown, 1 an error (unreachable, unknown workload), 2 usage.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/status_format.h"
#include "server/html.h"

namespace aiscale::cli {
namespace {

struct StatusFlags {
  std::string name;
  std::string url = DefaultApiUrl();
  bool watch = false;
  bool json = false;
  double interval_s = 2;
};

int StatusUsage(std::ostream& os, int code) {
  os << "usage: aiscale status [NAME] [--url URL] [--watch [--interval S]] [--json]\n\n"
        "Shows what a running `aiscale run` is doing. Without NAME, one row per workload;\n"
        "with NAME (namespace/name or a plain name), its signals, conditions and recent\n"
        "decisions.\n"
        "  --url URL      the controller's API (default $AISCALE_URL or http://127.0.0.1:9464)\n"
        "  --watch        redraw every --interval seconds (default 2) until interrupted\n"
        "  --json         print the API's JSON\n"
        "Exit status: 0 shown, 1 an error, 2 usage.\n";
  return code;
}

bool ParseFlags(const Args& args, StatusFlags& f) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--url" && has_value) {
      f.url = args[++i];
    } else if (a == "--watch" || a == "-w") {
      f.watch = true;
    } else if (a == "--json") {
      f.json = true;
    } else if (a == "--interval" && has_value) {
      const std::string& v = args[++i];
      char* end = nullptr;
      f.interval_s = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(f.interval_s >= 0.2 && f.interval_s <= 3600)) {
        std::cerr << "aiscale status: --interval must be seconds in 0.2..3600\n";
        return false;
      }
    } else if (f.name.empty() && !a.empty() && a[0] != '-') {
      f.name = a;
    } else {
      std::cerr << "aiscale status: unexpected argument '" << a << "'\n";
      return false;
    }
  }
  return true;
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One frame of output, or the error that stopped it.
Result<std::string> Frame(const ApiClient& api, const StatusFlags& f) {
  if (f.name.empty()) {
    ASSIGN_OR_RETURN(nlohmann::json list, api.Get("/api/v1/workloads"));
    return f.json ? list.dump(2) + "\n" : StatusTable(list, NowSeconds());
  }
  const std::string path = "/api/v1/workloads/" + server::UrlEncode(f.name);
  ASSIGN_OR_RETURN(nlohmann::json w, api.Get(path));
  auto decisions = api.Get(path + "/decisions?limit=10");
  const nlohmann::json d = decisions.ok() ? *decisions : nlohmann::json::object();
  if (f.json) return nlohmann::json{{"workload", w}, {"decisions", d}}.dump(2) + "\n";
  return DescribeText(w, d, NowSeconds());
}

}  // namespace

int ShowStatus(const Args& args) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") return StatusUsage(std::cout, 0);
  }
  StatusFlags f;
  if (!ParseFlags(args, f)) return StatusUsage(std::cerr, 2);
  const ApiClient api(f.url);
  const bool tty = isatty(STDOUT_FILENO) == 1;
  for (;;) {
    auto frame = Frame(api, f);
    if (!frame.ok() && !f.watch) {
      std::cerr << "aiscale status: " << frame.status().message() << "\n";
      return 1;
    }
    if (f.watch) {
      // Clear the screen on a terminal; a separator line when piped, so each frame is found.
      std::cout << (tty ? "\033[H\033[2J" : "") << "Every " << server::ShortNumber(f.interval_s)
                << "s: aiscale status " << f.name << "  (" << api.base() << ")\n\n";
    }
    std::cout << (frame.ok() ? *frame : "error: " + frame.status().message() + "\n");
    std::cout.flush();
    if (!f.watch) return 0;
    std::this_thread::sleep_for(std::chrono::duration<double>(f.interval_s));
  }
}

}  // namespace aiscale::cli
