#include "server/request_head.h"

#include <cctype>
#include <charconv>

namespace aiscale::server {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

RequestHead Reject(int status, std::string why) {
  RequestHead h;
  h.state = RequestHead::State::kRejected;
  h.status = status;
  h.why = std::move(why);
  return h;
}

// "GET /path?q HTTP/1.1": method and path, or false.
bool ParseRequestLine(std::string_view line, RequestHead& h) {
  line = Trim(line);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1) return false;
  if (!line.substr(sp2 + 1).starts_with("HTTP/")) return false;
  h.method = std::string(line.substr(0, sp1));
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  h.path = std::string(target.substr(0, target.find('?')));
  return !h.method.empty() && !h.path.empty();
}

// One header line; false (with `out` set to the rejection) when it makes the request invalid.
bool ReadHeader(std::string_view line, size_t begin, size_t end, const HeadLimits& limits,
                RequestHead& h, RequestHead& out, bool& has_length) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    out = Reject(400, "malformed header line");
    return false;
  }
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = Trim(line.substr(colon + 1));
  if (IEquals(name, "Content-Length")) {
    size_t n = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || p != value.data() + value.size() ||
        (has_length && n != h.body_bytes)) {
      out = Reject(400, "invalid Content-Length");
      return false;
    }
    if (n > limits.max_body_bytes) {
      out = Reject(413, "body of " + std::to_string(n) + " bytes; at most " +
                            std::to_string(limits.max_body_bytes));
      return false;
    }
    has_length = true;
    h.body_bytes = n;
  } else if (IEquals(name, "Transfer-Encoding")) {
    out = Reject(411, "chunked request bodies are not accepted; send Content-Length");
    return false;
  } else if (IEquals(name, "Expect") && IEquals(value, "100-continue")) {
    h.expect_continue = true;
    h.expect_begin = begin;
    h.expect_end = end;
  }
  return true;
}

}  // namespace

RequestHead ScanHead(std::string_view in, const HeadLimits& limits) {
  RequestHead h;
  bool has_length = false;
  size_t lines = 0;
  size_t pos = 0;
  while (true) {
    const size_t nl = in.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (in.size() > limits.max_head_bytes) {
        return Reject(431, "request head over " + std::to_string(limits.max_head_bytes) + " bytes");
      }
      return h;  // incomplete
    }
    if (nl + 1 > limits.max_head_bytes) {
      return Reject(431, "request head over " + std::to_string(limits.max_head_bytes) + " bytes");
    }
    std::string_view line = in.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t begin = pos;
    pos = nl + 1;
    if (lines == 0) {
      // (The listener drops stray line ends between requests, RFC 9112 2.2, before this.)
      if (!ParseRequestLine(line, h)) return Reject(400, "malformed request line");
      ++lines;
      continue;
    }
    if (line.empty()) break;  // end of the head
    if (++lines > limits.max_header_lines + 1) {
      return Reject(431, "more than " + std::to_string(limits.max_header_lines) + " header lines");
    }
    RequestHead out;
    if (!ReadHeader(line, begin, pos, limits, h, out, has_length)) return out;
  }
  h.head_bytes = pos;
  if (in.size() >= h.head_bytes + h.body_bytes) h.state = RequestHead::State::kComplete;
  return h;
}

}  // namespace aiscale::server
