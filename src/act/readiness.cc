#include "act/readiness.h"

#include <sys/stat.h>

#include <fstream>

namespace aiscale::act {

bool ProbeHttp(HttpClient& http, int port, const std::string& path, Duration timeout) {
  HttpRequest req;
  req.method = "GET";
  req.url = "http://127.0.0.1:" + std::to_string(port) + path;
  req.timeout = timeout;
  req.max_body_bytes = 64 * 1024;
  Result<HttpResponse> resp = http.Send(req);
  return resp.ok() && resp->status >= 200 && resp->status < 300;
}

bool ScanLog(const std::string& path, const std::string& text, LogScan& scan, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in || text.empty()) return text.empty();
  in.seekg(scan.offset);
  std::string chunk(max_bytes, '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  scan.offset += static_cast<int64_t>(chunk.size());
  const std::string data = scan.carry + chunk;
  const bool found = data.find(text) != std::string::npos;
  const size_t keep = std::min(data.size(), text.size() - 1);
  scan.carry = data.substr(data.size() - keep);
  return found;
}

int64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace aiscale::act
