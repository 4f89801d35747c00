#include "core/http.h"

#include <algorithm>
#include <cctype>

namespace aiscale {

std::string HttpResponse::Header(std::string_view name) const {
  auto lower_eq = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (const auto& [k, v] : headers) {
    if (lower_eq(k, name)) return v;
  }
  return "";
}

Result<HttpResponse> HttpClient::Stream(const HttpRequest& req, const StreamHandler& handler) {
  Result<HttpResponse> r = Send(req);
  if (!r.ok() || r->status < 200 || r->status >= 300) return r;
  if (!r->body.empty()) handler.on_data(r->body);
  r->body.clear();
  return r;
}

Status StatusFromHttp(int status, const std::string& message) {
  if (status >= 200 && status < 300) return Status::Ok();
  const std::string m = "HTTP " + std::to_string(status) + ": " + message;
  if (status == 404) return Status::NotFound(m);
  if (status == 409) return Status::Conflict(m);
  if (status == 401 || status == 403) return Status::PermissionDenied(m);
  if (status == 408 || status == 429 || status >= 500) return Status::Unavailable(m);
  return Status::Invalid(m);
}

}  // namespace aiscale
