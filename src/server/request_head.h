// RequestHead: what the API's listener needs to know about the bytes of a request before it
// hands them to the HTTP library: is the head complete, how long is the body, and is either
// past a limit. Pure; table-tested.
//
// Why: cpp-httplib reads a request's headers one line at a time from the socket with no limit
// on their number and only a per-read timeout, so six clients streaming header lines grew the
// daemon to 1.9 GB, and a byte every 1.5 s held a worker forever. The listener now reads
// requests itself, under these limits, and gives the library only complete requests.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace aiscale::server {

struct HeadLimits {
  size_t max_head_bytes = 16 * 1024;  // request line and headers, with their line ends
  size_t max_header_lines = 100;
  size_t max_body_bytes = 64 * 1024;
};

struct RequestHead {
  enum class State { kIncomplete, kComplete, kRejected };
  State state = State::kIncomplete;
  // kRejected: the HTTP status to answer (400, 411, 413, 431, 501) and why.
  int status = 0;
  std::string why;
  // kComplete:
  size_t head_bytes = 0;  // through the blank line
  size_t body_bytes = 0;  // Content-Length
  std::string method;
  std::string path;  // the request target without its query
  bool expect_continue = false;
  // The "Expect: 100-continue" line's bytes [begin, end) within the head, for the listener to
  // drop once it has answered it itself (0, 0 when none).
  size_t expect_begin = 0, expect_end = 0;
};

// Scans `in` (the bytes of a connection, from the start of a request).
RequestHead ScanHead(std::string_view in, const HeadLimits& limits);

}  // namespace aiscale::server
