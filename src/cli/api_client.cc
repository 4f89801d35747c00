#include "cli/api_client.h"

#include <cstdlib>

#include "cli/api_token.h"
#include "core/curl_http_client.h"

namespace aiscale::cli {
namespace {

std::string ServerMessage(const HttpResponse& r) {
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object() &&
      j["error"].contains("message") && j["error"]["message"].is_string()) {
    return j["error"]["message"].get<std::string>();
  }
  return r.body.substr(0, 200);
}

}  // namespace

std::string DefaultApiUrl() {
  const char* env = std::getenv("AISCALE_URL");
  return env && *env ? env : "http://127.0.0.1:9464";
}

ApiClient::ApiClient(std::string base_url) : base_(std::move(base_url)) {
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
}

Result<nlohmann::json> ApiClient::Get(const std::string& path) const {
  return Send("GET", path, "", "");
}

Result<nlohmann::json> ApiClient::Send(const std::string& method, const std::string& path,
                                       const std::string& body, const std::string& token) const {
  HttpRequest req;
  req.method = method;
  req.url = base_ + path;
  req.timeout = Seconds(10);
  if (!token.empty()) req.headers.push_back({"Authorization", "Bearer " + token});
  if (method != "GET") {
    req.headers.push_back({"Content-Type", "application/json"});
    req.body = body;
  }
  CurlHttpClient client;
  auto resp = client.Send(req);
  if (!resp.ok()) return resp.status().Wrap("unable to reach aiscale at " + base_);
  if (resp->status != 200) {
    const std::string msg = "aiscale at " + base_ + " answered " + std::to_string(resp->status) +
                            ": " + ServerMessage(*resp);
    if (resp->status >= 500) return Status::Unavailable(msg);
    return StatusFromHttp(resp->status, msg);
  }
  auto j = nlohmann::json::parse(resp->body, nullptr, false);
  if (j.is_discarded()) return Status::Invalid("aiscale at " + base_ + " answered with no JSON");
  return j;
}

Result<std::string> LoadCliToken(const std::string& file) {
  if (!file.empty()) return ReadTokenFile(file);
  if (const char* f = std::getenv("AISCALE_TOKEN_FILE"); f && *f) return ReadTokenFile(f);
  if (const char* t = std::getenv("AISCALE_TOKEN"); t && *t) return std::string(t);
  return Status::Invalid(
      "a token is needed: --token-file FILE, or $AISCALE_TOKEN_FILE, or $AISCALE_TOKEN (the "
      "controller's server.token_file)");
}

}  // namespace aiscale::cli
