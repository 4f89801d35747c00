// Readiness probes of a local replica: an HTTP GET on its port that must answer 2xx, or a
// substring in its log since it started. Pure I/O helpers with no state of their own beyond
// the LogScan the caller keeps; thread-safe as far as the HttpClient is.
#pragma once

#include <cstdint>
#include <string>

#include "core/http.h"
#include "core/time.h"

namespace aiscale::act {

// GET http://127.0.0.1:<port><path>; true on a 2xx answer within `timeout`.
bool ProbeHttp(HttpClient& http, int port, const std::string& path, Duration timeout);

// Where a log scan stands: the file offset read up to, and the last bytes of what was read
// (one byte fewer than the text), so a match split across two reads is still found.
struct LogScan {
  int64_t offset = 0;
  std::string carry;
};
// Reads what was appended to `path` since `scan` (at most `max_bytes`) and advances it; true
// when `text` occurs in the output since the scan began.
bool ScanLog(const std::string& path, const std::string& text, LogScan& scan,
             size_t max_bytes = 1 << 20);
// The current size of `path` (0 when absent): where a new process's output will begin.
int64_t FileSize(const std::string& path);

}  // namespace aiscale::act
