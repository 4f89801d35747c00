// A running `aiscale run`'s API as the CLI uses it (status, pause, resume, pin): one request,
// a JSON answer or an error that carries the server's own message.
//
// The base URL comes from --url, else $AISCALE_URL, else http://127.0.0.1:9464 (the config's
// default). A bearer token, where one is needed, comes from --token-file, else
// $AISCALE_TOKEN_FILE, else $AISCALE_TOKEN; it is sent only in the Authorization header and
// never printed. Thread-compatible (one call at a time per client).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace aiscale::cli {

std::string DefaultApiUrl();

class ApiClient {
 public:
  explicit ApiClient(std::string base_url);
  // GET base + path; the parsed JSON body of a 200, else an error with the server's message
  // (kNotFound for 404, kPermissionDenied for 401/403, kInvalid for other 4xx, kUnavailable
  // when unreachable or 5xx).
  Result<nlohmann::json> Get(const std::string& path) const;
  // A mutating call with `token` as the bearer token and `body` as JSON (may be empty).
  Result<nlohmann::json> Send(const std::string& method, const std::string& path,
                              const std::string& body, const std::string& token) const;
  const std::string& base() const { return base_; }

 private:
  std::string base_;
};

// The token for mutating calls: `file` when given, else the environment (see above); kInvalid
// naming where it looked when there is none.
Result<std::string> LoadCliToken(const std::string& file);

}  // namespace aiscale::cli
