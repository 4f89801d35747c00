// LibraryServer: cpp-httplib's request parsing, routing and handlers, run over one request the
// HttpListener has already read in full, with the response written to a string.
//
// Why: the library's handlers and routing stay (and whatever routes are added to them), while
// its sockets, thread per connection and unbounded header reading are replaced by the
// listener's. httplib::Server::process_request takes any httplib::Stream; this feeds it the
// buffered request. Thread-safe as the library's server is: Process runs on several workers.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>

#include "server/http_listener.h"

namespace aiscale::server {

class LibraryServer final : public httplib::Server {
 public:
  // The response bytes for `request` (one complete request); `close` is set when the
  // connection must close after it (the client asked, or `keep_alive` was false).
  std::string Process(std::string_view request, const Peer& peer, bool keep_alive, bool& close);
};

}  // namespace aiscale::server
