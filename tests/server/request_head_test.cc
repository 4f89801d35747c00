// ScanHead: when a request's bytes are complete, and which limits refuse it (issue 27 §6:
// header lines streamed without end grew the daemon to 1.9 GB).
#include "server/request_head.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace aiscale::server {
namespace {

using State = RequestHead::State;

std::string Headers(int n) {
  std::string s = "GET /metrics HTTP/1.1\r\n";
  for (int i = 0; i < n; ++i) s += "X-H" + std::to_string(i) + ": v\r\n";
  return s + "\r\n";
}

TEST(RequestHead, CompleteIncompleteOrRefused) {
  HeadLimits limits;
  limits.max_head_bytes = 1024;
  limits.max_header_lines = 10;
  limits.max_body_bytes = 100;
  struct Case {
    std::string name;
    std::string in;
    State state;
    int status;        // when refused
    std::string path;  // when complete
    size_t body;       // when complete (the head is the rest)
  };
  const std::vector<Case> cases = {
      {"a GET", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", State::kComplete, 0, "/healthz", 0},
      {"query dropped from the path", "GET /api/v1/workloads/a/decisions?limit=2 HTTP/1.1\r\n\r\n",
       State::kComplete, 0, "/api/v1/workloads/a/decisions", 0},
      {"bare line ends", "GET /x HTTP/1.0\nHost: y\n\n", State::kComplete, 0, "/x", 0},
      {"head not finished", "GET /x HTTP/1.1\r\nHost: y\r\n", State::kIncomplete, 0, "", 0},
      {"body not all there", "POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", State::kIncomplete,
       0, "", 0},
      {"body all there", "POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde", State::kComplete, 0,
       "/x", 5},
      {"ten headers", Headers(10), State::kComplete, 0, "/metrics", 0},
      {"eleven headers", Headers(11), State::kRejected, 431, "", 0},
      {"a head past its size, unfinished", "GET /x HTTP/1.1\r\nX: " + std::string(2000, 'a'),
       State::kRejected, 431, "", 0},
      {"body past its limit", "POST /x HTTP/1.1\r\nContent-Length: 101\r\n\r\n", State::kRejected,
       413, "", 0},
      {"chunked", "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", State::kRejected, 411,
       "", 0},
      {"two lengths", "POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
       State::kRejected, 400, "", 0},
      {"a length that is not a number", "POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
       State::kRejected, 400, "", 0},
      {"no request line", "\r\n", State::kRejected, 400, "", 0},
      {"not HTTP", "HELLO\r\n\r\n", State::kRejected, 400, "", 0},
      {"header without a colon", "GET /x HTTP/1.1\r\nnonsense\r\n\r\n", State::kRejected, 400, "",
       0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const RequestHead h = ScanHead(c.in, limits);
    EXPECT_EQ(h.state, c.state) << h.why;
    if (c.state == State::kRejected) {
      EXPECT_EQ(h.status, c.status) << h.why;
      EXPECT_FALSE(h.why.empty());
    }
    if (c.state == State::kComplete) {
      EXPECT_EQ(h.path, c.path);
      EXPECT_EQ(h.head_bytes, c.in.size() - c.body);
      EXPECT_EQ(h.body_bytes, c.body);
    }
  }
}

// The listener answers Expect: 100-continue itself and drops the line before the library sees
// the request (or the library would send a second 100).
TEST(RequestHead, FindsTheExpectLine) {
  const std::string in =
      "POST /x HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\nHost: h\r\n\r\nabc";
  const RequestHead h = ScanHead(in, HeadLimits{});
  ASSERT_EQ(h.state, State::kComplete);
  EXPECT_TRUE(h.expect_continue);
  EXPECT_EQ(in.substr(h.expect_begin, h.expect_end - h.expect_begin), "Expect: 100-continue\r\n");
}

}  // namespace
}  // namespace aiscale::server
