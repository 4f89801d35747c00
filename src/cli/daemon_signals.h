// The signals `aiscale run` takes and what each one means, in one place: every thread blocks
// them, one thread waits for them (sigwait), and ActionOf says what to do.
//
// Why: a signal that kills the daemon skips its clean stop (the policies' state flushed, the
// Lease released, local replicas stopped); SIGHUP did exactly that. SIGTERM and SIGINT stop
// cleanly; SIGHUP is taken and ignored with a log line until it is given a meaning (reload the
// config): that change belongs in ActionOf.
#pragma once

#include <signal.h>

#include <string>

namespace aiscale::cli {

enum class SignalAction { kStop, kIgnore };

// SIGTERM, SIGINT and SIGHUP.
sigset_t DaemonSignals();
SignalAction ActionOf(int sig);
// The line logged for an ignored signal.
std::string IgnoredSignalLine(int sig);

}  // namespace aiscale::cli
