// The API server under abuse (issue 27 §6): header lines streamed without end, clients that
// send a byte now and then, hundreds of idle connections, bodies past the limit. Each is cut
// off by its limit, counted, and never keeps /healthz from answering. Raw sockets on
// 127.0.0.1; limits are made small where that keeps the test short, the defaults where the
// issue's figures (500 idle, 40 slow) are the point. Bounds asserted here are generous (a busy
// machine must pass): the latency figures are printed, and measured in docs/api-limits.md.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "server/api_server.h"
#include "server/fake_live_view.h"
#include "store/memory_store.h"

namespace aiscale::server {
namespace {

using Clock = std::chrono::steady_clock;
using aiscale::testing::FakeLiveView;

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads until the peer closes or `limit` passes; what arrived.
std::string ReadUntilClosed(int fd, std::chrono::milliseconds limit) {
  std::string out;
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, left.count()))) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// One GET on a fresh connection: the status (0: none) and how long it took.
std::pair<int, double> Get(int port, const std::string& path) {
  const auto t0 = Clock::now();
  const int fd = Connect(port);
  if (fd < 0) return {0, 0};
  SendAll(fd, "GET " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  const std::string r = ReadUntilClosed(fd, std::chrono::seconds(10));
  ::close(fd);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return {r.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(r.substr(9, 3)) : 0, s};
}

class ApiLimitsTest : public ::testing::Test {
 protected:
  void StartWith(ListenerLimits limits) {
    view_.SetReady(true);
    server_ = std::make_unique<ApiServer>(ServerOptions{"127.0.0.1", 0, limits}, view_, &store_,
                                          telemetry_);
    ASSERT_TRUE(server_->Start().ok());
    port_ = server_->port();
  }
  double Rejected(const std::string& reason) {
    return telemetry_.Value("aiscale_api_rejected_total", {{"reason", reason}});
  }

  FakeLiveView view_;
  store::MemoryStore store_;
  Telemetry telemetry_;
  std::unique_ptr<ApiServer> server_;
  int port_ = 0;
};

// Header lines streamed without end: cut at the head limit with 431, memory bounded by it.
TEST_F(ApiLimitsTest, EndlessHeaderLinesGet431) {
  ListenerLimits l;
  l.head.max_head_bytes = 4096;
  StartWith(l);
  const int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET /healthz HTTP/1.1\r\n");
  std::string answer;
  for (int i = 0; i < 2000 && answer.empty(); ++i) {  // up to ~60 KB of header lines
    if (!SendAll(fd, "X-Filler-" + std::to_string(i) + ": aaaaaaaaaaaaaaaa\r\n")) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) answer = ReadUntilClosed(fd, std::chrono::seconds(5));
  }
  if (answer.empty()) answer = ReadUntilClosed(fd, std::chrono::seconds(5));
  ::close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 431 ", 0), 0u) << answer.substr(0, 200);
  EXPECT_NE(answer.find("RequestHeaderFieldsTooLarge"), std::string::npos);
  EXPECT_EQ(Rejected("head_too_large"), 1);
  EXPECT_EQ(Get(port_, "/healthz").first, 200);
}

// A byte now and then never completes a request: 408 at the head timeout, and the probe
// answers meanwhile.
TEST_F(ApiLimitsTest, ASlowClientIsCutOffAtTheHeadTimeout) {
  ListenerLimits l;
  l.head_timeout = std::chrono::milliseconds(800);
  StartWith(l);
  const int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  const auto t0 = Clock::now();
  std::string answer;
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: slow\r\n\r\n";
  for (char c : request) {
    if (!SendAll(fd, std::string(1, c))) break;
    answer = ReadUntilClosed(fd, std::chrono::milliseconds(300));
    if (!answer.empty()) break;
    EXPECT_EQ(Get(port_, "/healthz").first, 200);
  }
  ::close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 408 ", 0), 0u) << answer.substr(0, 200);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 10.0);
  EXPECT_EQ(Rejected("timeout"), 1);
}

// More connections than allowed: the ones idle longest make room, so a probe always gets in.
TEST_F(ApiLimitsTest, IdleConnectionsAreEvictedToLetAProbeIn) {
  ListenerLimits l;
  l.max_connections = 20;
  StartWith(l);
  std::vector<int> idle;
  for (int i = 0; i < 30; ++i) idle.push_back(Connect(port_));
  EXPECT_EQ(Get(port_, "/healthz").first, 200);
  EXPECT_EQ(Get(port_, "/readyz").first, 200);
  for (int fd : idle) ::close(fd);
  EXPECT_GE(Rejected("evicted"), 10);
}

TEST_F(ApiLimitsTest, BodiesPastTheLimitGet413AndPipelinedRequestsAreAnswered) {
  ListenerLimits l;
  l.head.max_body_bytes = 1000;
  StartWith(l);
  int fd = Connect(port_);
  SendAll(fd, "POST /healthz HTTP/1.1\r\nContent-Length: 5000\r\n\r\n");
  std::string answer = ReadUntilClosed(fd, std::chrono::seconds(5));
  ::close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 413 ", 0), 0u) << answer.substr(0, 200);

  fd = Connect(port_);
  SendAll(fd,
          "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /readyz HTTP/1.1\r\nHost: a\r\n"
          "Connection: close\r\n\r\n");
  answer = ReadUntilClosed(fd, std::chrono::seconds(5));
  ::close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 ", 0), 0u) << answer.substr(0, 200);
  EXPECT_NE(answer.find("HTTP/1.1 200 ", 10), std::string::npos) << answer;  // the second

  // A body announced with Expect: 100-continue: told to go on, then answered (405: read-only).
  fd = Connect(port_);
  SendAll(fd, "POST /metrics HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  answer = ReadUntilClosed(fd, std::chrono::milliseconds(500));
  EXPECT_EQ(answer.rfind("HTTP/1.1 100 Continue", 0), 0u) << answer;
  SendAll(fd, "abcd");
  answer += ReadUntilClosed(fd, std::chrono::seconds(3));
  ::close(fd);
  EXPECT_NE(answer.find("HTTP/1.1 405 "), std::string::npos) << answer;
  EXPECT_EQ(answer.find("100 Continue", 30), std::string::npos) << answer;  // only once
}

// The figures with the default limits: 500 idle connections and 40 clients sending a
// byte every 1.5 s held open while /healthz is asked 100 times. Every probe must answer (the
// bound here is generous: a busy machine must pass); the p99 is printed.
TEST_F(ApiLimitsTest, HealthzAnswersWith500IdleAnd40SlowClientsHeldOpen) {
  StartWith(ListenerLimits{});
  std::vector<int> held;
  for (int i = 0; i < 500; ++i) held.push_back(Connect(port_));
  std::vector<int> slow;
  for (int i = 0; i < 40; ++i) {
    slow.push_back(Connect(port_));
    SendAll(slow.back(), "GET /metrics HTTP/1.1\r\n");
  }
  // Every one of them held by the server (accepted, none refused).
  for (int i = 0; i < 200 && server_->connections() < 540; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(server_->connections(), 540u);
  std::vector<double> took;
  const auto started = Clock::now();
  for (int i = 0; i < 100; ++i) {
    // Within the idle timeout (5 s), so the idle ones stay open throughout; each slow client
    // sends one more byte now and then.
    if (i % 50 == 0) {
      for (int fd : slow) SendAll(fd, "X");
    }
    const auto [status, seconds] = Get(port_, "/healthz");
    EXPECT_EQ(status, 200) << "probe " << i;
    took.push_back(seconds);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double span = std::chrono::duration<double>(Clock::now() - started).count();
  std::sort(took.begin(), took.end());
  const double p50 = took[49], p99 = took[98], max = took.back();
  std::printf(
      "healthz with 500 idle + 40 slow clients over %.1f s: p50 %.2f ms, p99 %.2f ms, "
      "max %.2f ms\n",
      span, p50 * 1e3, p99 * 1e3, max * 1e3);
  EXPECT_LT(p99, 2.0);
  for (int fd : held) ::close(fd);
  for (int fd : slow) ::close(fd);
}

}  // namespace
}  // namespace aiscale::server
