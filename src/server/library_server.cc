#include "server/library_server.h"

#include <algorithm>
#include <cstring>

namespace aiscale::server {
namespace {

// A whole request to read, a string to write the response into.
class BufferedStream final : public httplib::Stream {
 public:
  BufferedStream(std::string_view in, const Peer& peer) : in_(in), peer_(peer) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, in_.size() - pos_);
    std::memcpy(ptr, in_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_.ip;
    port = peer_.port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip.clear();
    port = 0;
  }
  socket_t socket() const override { return INVALID_SOCKET; }
  std::string& out() { return out_; }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  const Peer& peer_;
  std::string out_;
};

}  // namespace

std::string LibraryServer::Process(std::string_view request, const Peer& peer, bool keep_alive,
                                   bool& close) {
  BufferedStream stream(request, peer);
  bool closed = false;
  const bool ok = process_request(stream, !keep_alive, closed, [&](httplib::Request& req) {
    req.remote_addr = peer.ip;
    req.remote_port = peer.port;
  });
  close = !ok || closed || !keep_alive;
  return std::move(stream.out());
}

}  // namespace aiscale::server
