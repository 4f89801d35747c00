// HttpListener: the API's sockets. One thread polls every connection and reads requests under
// hard limits; only complete requests reach a handler, on a small worker pool (or, for the
// probes, at once on the polling thread).
//
// Why: the HTTP library's thread-per-connection model let anyone who reaches the port take the
// daemon down: 500 idle connections or 40 clients sending a byte every 1.5 s held every worker
// and /healthz timed out (the kubelet then restarts a healthy autoscaler), and header lines
// streamed without end grew memory to 1.9 GB. Here an idle or slow connection costs a file
// descriptor and a small buffer, never a thread:
//   - a request's head and body must arrive within head_timeout of its first byte (408), the
//     head within HeadLimits (431), the body within max_body_bytes (413);
//   - a connection idle longer than idle_timeout is closed, and one whose answer is not taken
//     within write_timeout too;
//   - at max_connections, a new connection evicts the connection that has been idle (or
//     slowest to send its request) longest, so a probe always gets in;
//   - `fast` paths (/healthz, /readyz) are answered on the polling thread, never queued behind
//     slow handlers.
// Rejections are counted through `on_reject`. Thread-safe: Start/Stop from one thread; the
// callbacks run on the polling thread (fast paths, rejections) or a worker.
//
//   HttpListener l(options, handlers);
//   RETURN_IF_ERROR(l.Start());  // binds host:port
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/result.h"
#include "server/request_head.h"

namespace aiscale::server {

struct ListenerLimits {
  HeadLimits head;
  size_t max_connections = 1024;
  std::chrono::milliseconds head_timeout{10'000};  // first byte to the request's last
  std::chrono::milliseconds idle_timeout{5'000};   // no request in progress
  std::chrono::milliseconds write_timeout{10'000};
  size_t max_requests_per_connection = 1000;
  int workers = 4;
};

struct Peer {
  std::string ip;
  int port = 0;
};

struct ListenerHandlers {
  // Answers one complete request (head and body as read): returns the response's bytes and
  // sets `close` when the connection must close after it. `keep_alive` says whether it may
  // stay open.
  std::function<std::string(std::string_view request, const Peer& peer, bool keep_alive,
                            bool& close)>
      process;
  // A whole response (status line to body) for a request the listener refuses itself.
  std::function<std::string(int status, const std::string& why)> reject;
  // Paths answered on the polling thread (cheap, no I/O): the probes.
  std::function<bool(std::string_view path)> fast;
  // Called for each refusal, by reason ("head_too_large", "timeout", "evicted", ...).
  std::function<void(std::string_view reason)> on_reject;
};

class HttpListener {
 public:
  HttpListener(std::string host, int port, ListenerLimits limits, ListenerHandlers handlers);
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Binds and starts the threads. kUnavailable naming host:port when it cannot bind.
  Status Start();
  // Stops accepting, lets requests in flight finish, closes every connection, joins. Idempotent.
  void Stop();
  int port() const { return port_; }
  size_t connections() const { return open_.load(); }

 private:
  struct Conn;
  struct Done {
    int fd;
    uint64_t generation;
    std::string response;
    bool close;
  };
  using Clock = std::chrono::steady_clock;

  void Loop();
  // Accepts what is pending; false when out of file descriptors (pause accepting a moment).
  bool Accept();
  void EvictOne();
  void Read(Conn& c);
  void Write(Conn& c);
  // Looks for a complete request in c.in and dispatches it, or refuses it.
  void Advance(Conn& c);
  void Refuse(Conn& c, int status, const std::string& why, std::string_view reason);
  void Finish(Conn& c, std::string response, bool close);
  void Expire(Clock::time_point now);
  void CloseConn(int fd);
  void TakeDone();
  void Worker();
  void Wake();

  const std::string host_;
  const int requested_port_;
  const ListenerLimits limits_;
  const ListenerHandlers handlers_;
  int port_ = 0;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: workers and Stop wake the poll
  std::atomic<bool> stop_{false};
  std::atomic<size_t> open_{0};
  uint64_t next_generation_ = 1;
  std::vector<std::unique_ptr<Conn>> conns_;  // by fd (sparse); the polling thread's own
  std::thread poller_;
  std::vector<std::thread> workers_;

  struct Task {
    int fd;
    uint64_t generation;
    std::string request;
    Peer peer;
    bool keep_alive;
  };
  std::mutex mu_;  // guards tasks_, done_, workers_stop_
  std::condition_variable work_cv_;
  std::deque<Task> tasks_;
  std::vector<Done> done_;
  bool workers_stop_ = false;
};

}  // namespace aiscale::server
