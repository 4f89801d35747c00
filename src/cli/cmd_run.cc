// `aiscale run -c FILE [--dry-run] [--once] [--exit-when-done] [--verbose]`: the controller
// live (cli/daemon.h). SIGTERM and SIGINT stop it after the tick in flight; it then stops the
// replicas it started and exits 0; with --exit-when-done it does the same on its own once
// every workload's engine reports it completed (a batch of training jobs). SIGHUP reloads the
// config file (validated first; a bad file is logged and the running config kept). Signals are
// taken by one thread with sigwait, so no handler runs inside a tick.
#include <pthread.h>
#include <signal.h>

#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/controller_config.h"
#include "cli/daemon.h"
#include "core/config/config_node.h"

namespace aiscale::cli {
namespace {

struct RunFlags {
  std::string config;
  DaemonOptions opt;
};

int RunUsage(std::ostream& os, int code) {
  os << "usage: aiscale run -c FILE [--dry-run] [--once [--wait-ready DUR]] [--exit-when-done]\n"
        "                   [--verbose]\n"
        "  -c, --config FILE  the ControllerConfig to run\n"
        "  --dry-run          decide and record as live, never change a workload's scale\n"
        "  --once             one collection and one tick, then exit (cron, tests); replicas the\n"
        "                     run starts (local engine) are stopped when it exits\n"
        "  --wait-ready DUR   with --once: first wait up to DUR (default 10s, 0 = no wait) for\n"
        "                     every workload's replicas to be ready, so the tick reads them\n"
        "  --exit-when-done   exit 0 once every workload is completed (its engine says so:\n"
        "                     agents exited 0, Slurm jobs COMPLETED, PyTorchJob Succeeded)\n"
        "  --verbose          log every decision, not only changes and problems\n";
  return code;
}

bool ParseRunFlags(const Args& args, RunFlags& f, int& code) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "-c" || a == "--config") && i + 1 < args.size()) {
      f.config = args[++i];
    } else if (a == "--dry-run") {
      f.opt.dry_run = true;
    } else if (a == "--once") {
      f.opt.once = true;
    } else if (a == "--exit-when-done") {
      f.opt.exit_when_done = true;
    } else if (a == "--wait-ready" && i + 1 < args.size()) {
      // Read as a config duration would be (30s, 1m, 0), with the same checks.
      config::ConfigErrors errors;
      const config::ConfigNode n = config::ParseConfig("v: " + args[++i], "--wait-ready", errors);
      const double s = n.DurationSeconds("v", -1, config::Between(0, 3600));
      if (!errors.empty() || s < 0) {
        std::cerr << "aiscale run: --wait-ready wants a duration from 0 to 1h, got '" << args[i]
                  << "'\n";
        code = RunUsage(std::cerr, 2);
        return false;
      }
      f.opt.ready_wait = Seconds(s);
    } else if (a == "--verbose" || a == "-v") {
      f.opt.verbose = true;
    } else if (a == "--help" || a == "-h") {
      code = RunUsage(std::cout, 0);
      return false;
    } else {
      std::cerr << "aiscale run: unexpected argument '" << a << "'\n";
      code = RunUsage(std::cerr, 2);
      return false;
    }
  }
  if (f.config.empty()) {
    std::cerr << "aiscale run: a config file is required (-c FILE)\n";
    code = RunUsage(std::cerr, 2);
    return false;
  }
  return true;
}

}  // namespace

int Run(const Args& args) {
  RunFlags f;
  int code = 0;
  if (!ParseRunFlags(args, f, code)) return code;
  config::ConfigErrors errors;
  const config::ConfigNode root = config::LoadConfigFile(f.config, errors);
  auto cfg = errors.empty() ? ParseControllerConfig(root)
                            : Result<ControllerConfig>(Status::Invalid("unreadable"));
  if (!cfg.ok()) {
    std::cerr << errors.ToStatus().message() << "\n"
              << "aiscale run: " << f.config << " is not a valid ControllerConfig\n";
    return 1;
  }
  // Block the daemon's signals before any thread starts, so every thread inherits the mask and
  // only the waiter below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto daemon = Daemon::Build(std::move(cfg).value(), f.opt, std::cerr);
  if (!daemon.ok()) {
    std::cerr << "aiscale run: " << daemon.status().message() << "\n";
    return 1;
  }
  Daemon* d = daemon->get();
  std::thread waiter([&stop_signals, d] {
    for (;;) {
      int sig = 0;
      if (sigwait(&stop_signals, &sig) != 0) return;
      if (sig == SIGHUP) {
        d->RequestReload();
        continue;
      }
      d->RequestStop();
      return;
    }
  });
  const Status st = d->Run();
  // Wake the waiter if it is still waiting (a --once run, or a stop from elsewhere).
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  daemon->reset();
  if (!st.ok()) {
    std::cerr << "aiscale run: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace aiscale::cli
