#include "cli/daemon_signals.h"

#include <cstring>

namespace aiscale::cli {

sigset_t DaemonSignals() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGHUP);
  return s;
}

SignalAction ActionOf(int sig) {
  switch (sig) {
    case SIGTERM:
    case SIGINT:
      return SignalAction::kStop;
    default:  // SIGHUP: no reload yet
      return SignalAction::kIgnore;
  }
}

std::string IgnoredSignalLine(int sig) {
  std::string s = "aiscale: ignoring ";
  s += sig == SIGHUP ? "SIGHUP" : strsignal(sig);
  s += " (reloading the config is not supported yet; SIGTERM stops cleanly)";
  return s;
}

}  // namespace aiscale::cli
