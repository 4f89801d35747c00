#include "server/http_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace aiscale::server {
namespace {

constexpr auto kDrainTime = std::chrono::milliseconds(1000);
constexpr auto kAcceptPause = std::chrono::milliseconds(100);
constexpr size_t kReadChunk = 16 * 1024;

std::string Address(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Peer PeerOf(const sockaddr_storage& a) {
  Peer p;
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    p.port = ntohs(in->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
    inet_ntop(AF_INET6, &in->sin6_addr, buf, sizeof buf);
    p.port = ntohs(in->sin6_port);
  }
  p.ip = buf;
  return p;
}

std::string_view RefusalReason(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 408:
      return "timeout";
    case 411:
      return "length_required";
    case 413:
      return "body_too_large";
    case 431:
      return "head_too_large";
    default:
      return "refused";
  }
}

// A listening socket on host:port (non-blocking), or why not.
Result<int> Listen(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int gai = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (gai != 0) return Status::Unavailable(gai_strerror(gai));
  int err = EADDRNOTAVAIL;
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    // SO_REUSEADDR only: with SO_REUSEPORT a second daemon on the same port would bind without
    // error and silently share the traffic.
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      err = errno;
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) return Status::Unavailable(std::strerror(err));
  return fd;
}

}  // namespace

struct HttpListener::Conn {
  enum class State { kReading, kBusy, kWriting, kDraining };
  int fd = -1;
  uint64_t generation = 0;
  Peer peer;
  State state = State::kReading;
  std::string in;
  std::string out;
  size_t out_pos = 0;
  bool close_after = false;
  bool continue_sent = false;
  bool request_started = false;  // a byte of the next request has arrived
  bool eof = false;              // the client has sent all it will
  size_t served = 0;
  Clock::time_point since;     // when the current wait began (eviction picks the oldest)
  Clock::time_point deadline;  // of the current state; none while kBusy
};

HttpListener::HttpListener(std::string host, int port, ListenerLimits limits,
                           ListenerHandlers handlers)
    : host_(std::move(host)),
      requested_port_(port),
      limits_(limits),
      handlers_(std::move(handlers)) {}

HttpListener::~HttpListener() { Stop(); }

Status HttpListener::Start() {
  const std::string address = Address(host_, requested_port_);
  if (listen_fd_ >= 0) return Status::Conflict("api server already serving on " + address);
  Result<int> fd = Listen(host_, requested_port_);
  if (!fd.ok()) {
    return Status::Unavailable("unable to listen on " + address + ": " + fd.status().message() +
                               " (is another process using the port?)");
  }
  listen_fd_ = *fd;
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = PeerOf(a).port;
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  stop_ = false;
  workers_stop_ = false;
  for (int i = 0; i < std::max(1, limits_.workers); ++i)
    workers_.emplace_back([this] { Worker(); });
  poller_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void HttpListener::Stop() {
  if (listen_fd_ < 0) return;
  stop_ = true;
  Wake();
  if (poller_.joinable()) poller_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers_stop_ = true;
    tasks_.clear();
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  TakeDone();  // answers the workers finished: one last try to send each
  for (size_t fd = 0; fd < conns_.size(); ++fd) {
    if (conns_[fd]) CloseConn(static_cast<int>(fd));
  }
  done_.clear();
  ::close(listen_fd_);
  ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
  port_ = 0;
}

void HttpListener::Wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0) {
    const ssize_t n = ::write(wake_fd_, &one, sizeof one);
    (void)n;  // a full counter already wakes the poll
  }
}

void HttpListener::Loop() {
  std::vector<pollfd> fds;
  Clock::time_point accept_paused_until{};
  while (!stop_) {
    const Clock::time_point now = Clock::now();
    Clock::time_point next = now + std::chrono::seconds(1);
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    const bool accepting = now >= accept_paused_until;
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    for (const auto& c : conns_) {
      if (!c) continue;
      const bool out = c->state == Conn::State::kWriting;
      if (c->state != Conn::State::kBusy) {
        fds.push_back({c->fd, static_cast<short>(out ? POLLOUT : POLLIN), 0});
        next = std::min(next, c->deadline);
      }
    }
    if (!accepting) next = std::min(next, accept_paused_until);
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now);
    const int n =
        ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, wait.count()) + 1));
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) {
      uint64_t v = 0;
      while (::read(wake_fd_, &v, sizeof v) > 0) {
      }
      TakeDone();
    }
    if (accepting && fds[1].revents != 0 && !Accept()) {
      accept_paused_until = Clock::now() + kAcceptPause;  // out of descriptors for now
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const int fd = fds[i].fd;
      Conn* c = static_cast<size_t>(fd) < conns_.size() ? conns_[fd].get() : nullptr;
      if (c == nullptr) continue;
      if (c->state == Conn::State::kWriting) {
        Write(*c);
      } else if (c->state == Conn::State::kReading || c->state == Conn::State::kDraining) {
        Read(*c);
      }
    }
    Expire(Clock::now());
  }
}

bool HttpListener::Accept() {
  while (true) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    const int fd =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno == EMFILE || errno == ENFILE) {
        EvictOne();  // out of descriptors: make room, and let the poll breathe
        return false;
      }
      return true;
    }
    if (open_.load() >= limits_.max_connections) EvictOne();
    if (open_.load() >= limits_.max_connections) {  // everything busy answering: refuse
      ::close(fd);
      if (handlers_.on_reject) handlers_.on_reject("connections");
      continue;
    }
    int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    if (static_cast<size_t>(fd) >= conns_.size()) conns_.resize(static_cast<size_t>(fd) + 1);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->generation = next_generation_++;
    c->peer = PeerOf(a);
    c->since = Clock::now();
    c->deadline = c->since + limits_.idle_timeout;
    conns_[static_cast<size_t>(fd)] = std::move(c);
    ++open_;
  }
}

// At the connection limit: closes the connection that has waited longest without a request
// (idle), else the one slowest to send its request. Connections being answered are kept.
void HttpListener::EvictOne() {
  Conn* victim = nullptr;
  for (const auto& c : conns_) {
    if (!c || (c->state != Conn::State::kReading && c->state != Conn::State::kDraining)) continue;
    const auto rank = [](const Conn& x) { return x.request_started ? 1 : 0; };
    if (victim == nullptr || rank(*c) < rank(*victim) ||
        (rank(*c) == rank(*victim) && c->since < victim->since)) {
      victim = c.get();
    }
  }
  if (victim == nullptr) return;
  if (handlers_.on_reject) handlers_.on_reject("evicted");
  CloseConn(victim->fd);
}

void HttpListener::Read(Conn& c) {
  char buf[kReadChunk];
  // Enough for one whole request and the start of the next: a flood is read in bites.
  const size_t cap = limits_.head.max_head_bytes + limits_.head.max_body_bytes + kReadChunk;
  while (c.in.size() < cap) {
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      if (c.state == Conn::State::kDraining) continue;  // discarded
      if (!c.request_started) {
        c.request_started = true;
        c.since = Clock::now();
        c.deadline = c.since + limits_.head_timeout;
      }
      c.in.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n == 0 && c.state == Conn::State::kReading && !c.in.empty()) {
      c.eof = true;  // half-closed after its request: answer it, then close
      break;
    }
    CloseConn(c.fd);  // the peer closed, or the connection failed
    return;
  }
  const int fd = c.fd;
  const uint64_t generation = c.generation;
  Advance(c);  // may close c
  Conn* still = conns_[static_cast<size_t>(fd)].get();
  if (still != nullptr && still->generation == generation && still->eof &&
      still->state == Conn::State::kReading) {
    CloseConn(fd);  // an incomplete last request: nothing more will come
  }
}

void HttpListener::Advance(Conn& c) {
  if (c.state != Conn::State::kReading) return;
  const size_t lead = c.in.find_first_not_of("\r\n");
  c.in.erase(0, lead == std::string::npos ? c.in.size() : lead);
  if (c.in.empty()) return;
  const RequestHead h = ScanHead(c.in, limits_.head);
  if (h.state == RequestHead::State::kRejected) {
    Refuse(c, h.status, h.why, RefusalReason(h.status));
    return;
  }
  if (h.state == RequestHead::State::kIncomplete) {
    if (h.head_bytes > 0 && h.expect_continue && !c.continue_sent) {
      // The head is in and the client waits before sending its body: tell it to go on.
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      const ssize_t n = ::send(c.fd, kContinue.data(), kContinue.size(), MSG_NOSIGNAL);
      (void)n;  // a tiny write into an empty buffer; the client sends anyway after a while
      c.continue_sent = true;
    }
    return;
  }
  std::string request = c.in.substr(0, h.head_bytes + h.body_bytes);
  c.in.erase(0, h.head_bytes + h.body_bytes);
  // Answered here (or not needed, the body being in): the library must not answer it again.
  if (h.expect_continue) request.erase(h.expect_begin, h.expect_end - h.expect_begin);
  c.continue_sent = false;
  const bool keep_alive = !c.eof && c.served + 1 < limits_.max_requests_per_connection && !stop_;
  if (handlers_.fast && handlers_.fast(h.path)) {
    bool close = false;
    std::string response = handlers_.process(request, c.peer, keep_alive, close);
    Finish(c, std::move(response), close || !keep_alive);
    return;
  }
  c.state = Conn::State::kBusy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back({c.fd, c.generation, std::move(request), c.peer, keep_alive});
  }
  work_cv_.notify_one();
}

void HttpListener::Refuse(Conn& c, int status, const std::string& why, std::string_view reason) {
  if (handlers_.on_reject) handlers_.on_reject(reason);
  c.in.clear();
  Finish(c, handlers_.reject ? handlers_.reject(status, why) : std::string(), /*close=*/true);
}

void HttpListener::Finish(Conn& c, std::string response, bool close) {
  c.out = std::move(response);
  c.out_pos = 0;
  c.close_after = close;
  c.state = Conn::State::kWriting;
  c.deadline = Clock::now() + limits_.write_timeout;
  Write(c);
}

void HttpListener::Write(Conn& c) {
  while (c.out_pos < c.out.size()) {
    const ssize_t n =
        ::send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_pos += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    CloseConn(c.fd);
    return;
  }
  c.out.clear();
  c.out_pos = 0;
  const Clock::time_point now = Clock::now();
  if (c.close_after) {
    // Half-close and read what the client still sends for a moment: closing with unread bytes
    // would reset the connection and could destroy the answer before the client reads it.
    ::shutdown(c.fd, SHUT_WR);
    c.state = Conn::State::kDraining;
    c.deadline = now + kDrainTime;
    return;
  }
  ++c.served;
  c.state = Conn::State::kReading;
  c.request_started = !c.in.empty();
  c.since = now;
  c.deadline = now + (c.request_started ? limits_.head_timeout : limits_.idle_timeout);
  Advance(c);  // a pipelined request may be waiting
}

void HttpListener::Expire(Clock::time_point now) {
  for (size_t fd = 0; fd < conns_.size(); ++fd) {
    Conn* c = conns_[fd].get();
    if (c == nullptr || c->state == Conn::State::kBusy || now < c->deadline) continue;
    if (c->state == Conn::State::kReading && c->request_started) {
      Refuse(*c, 408,
             "request not complete within " + std::to_string(limits_.head_timeout.count()) + " ms",
             "timeout");
    } else {
      if (c->state == Conn::State::kWriting && handlers_.on_reject) {
        handlers_.on_reject("write_timeout");
      }
      CloseConn(static_cast<int>(fd));
    }
  }
}

void HttpListener::CloseConn(int fd) {
  ::close(fd);
  conns_[static_cast<size_t>(fd)].reset();
  --open_;
}

void HttpListener::TakeDone() {
  std::vector<Done> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done.swap(done_);
  }
  for (Done& d : done) {
    Conn* c = static_cast<size_t>(d.fd) < conns_.size() ? conns_[d.fd].get() : nullptr;
    if (c == nullptr || c->generation != d.generation) continue;
    Finish(*c, std::move(d.response), d.close);
  }
}

void HttpListener::Worker() {
  while (true) {
    Task t;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return workers_stop_ || !tasks_.empty(); });
      if (workers_stop_) return;
      t = std::move(tasks_.front());
      tasks_.pop_front();
    }
    bool close = false;
    std::string response;
    try {
      response = handlers_.process(t.request, t.peer, t.keep_alive, close);
    } catch (...) {  // no exception may end the daemon: the library's own are caught inside
      response = handlers_.reject ? handlers_.reject(500, "internal error while answering") : "";
      close = true;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_.push_back({t.fd, t.generation, std::move(response), close || !t.keep_alive});
    }
    Wake();
  }
}

}  // namespace aiscale::server
