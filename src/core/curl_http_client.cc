#include "core/curl_http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <mutex>

namespace aiscale {
namespace {

struct Sink {
  HttpResponse* resp;
  size_t max_body;
  bool overflow = false;
  const std::atomic<bool>* cancelled = nullptr;
};

// libcurl's progress callback: a non-zero return aborts the transfer.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const Sink*>(user)->cancelled->load() ? 1 : 0;
}

// The response's Content-Encoding, for a message ("" when it said none).
std::string EncodingOf(const HttpResponse& resp) {
  for (const auto& [k, v] : resp.headers) {
    if (k == "content-encoding") return v;
  }
  return "";
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t len = size * n;
  if (sink->resp->body.size() + len > sink->max_body) {
    sink->overflow = true;
    return 0;  // curl aborts the transfer with CURLE_WRITE_ERROR
  }
  sink->resp->body.append(data, len);
  return len;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* resp = static_cast<HttpResponse*>(user);
  const size_t len = size * n;
  std::string line(data, len);
  const size_t colon = line.find(':');
  if (colon == std::string::npos) {
    if (line.rfind("HTTP/", 0) == 0) resp->headers.clear();  // a new response (redirect, 100)
    return len;
  }
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string value = line.substr(colon + 1);
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  value.erase(value.begin(), std::find_if(value.begin(), value.end(), not_space));
  value.erase(std::find_if(value.rbegin(), value.rend(), not_space).base(), value.end());
  resp->headers.emplace_back(std::move(name), std::move(value));
  return len;
}

// "1", "0.25", "2.5": seconds as a person writes them.
std::string SecondsText(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", ToSeconds(d));
  return buf;
}

Status TransportError(CURLcode code, const Sink& sink, const HttpRequest& req, const char* detail) {
  const std::string where = req.method + " " + req.url;
  if (sink.overflow) {
    return Status::Invalid("unable to read " + where + ": response body exceeds " +
                           std::to_string(sink.max_body) + " bytes");
  }
  const std::string why = detail[0] ? detail : curl_easy_strerror(code);
  switch (code) {
    case CURLE_ABORTED_BY_CALLBACK:
      return Status::Unavailable("unable to read " + where + ": cancelled (stopping)");
    case CURLE_BAD_CONTENT_ENCODING:
      return Status::Invalid("unable to read " + where + ": cannot decode its Content-Encoding '" +
                             EncodingOf(*sink.resp) + "': " + why);
    case CURLE_OPERATION_TIMEDOUT:
      return Status::DeadlineExceeded("unable to read " + where + ": timed out after " +
                                      SecondsText(req.timeout) + " s: " + why);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return Status::Invalid("unable to read " + where + ": " + why);
    // The server's certificate is not trusted, or ours is unusable: asking again cannot help.
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      return Status::PermissionDenied("unable to read " + where + ": TLS: " + why);
    default:
      return Status::Unavailable("unable to read " + where + ": " + why);
  }
}

void SetBlob(CURL* h, CURLoption opt, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(h, opt, &blob);
}

void SetTls(CURL* h, const TlsOptions& tls) {
  if (!tls.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!tls.ca_pem.empty()) SetBlob(h, CURLOPT_CAINFO_BLOB, tls.ca_pem);
  if (!tls.client_cert_file.empty())
    curl_easy_setopt(h, CURLOPT_SSLCERT, tls.client_cert_file.c_str());
  if (!tls.client_key_file.empty())
    curl_easy_setopt(h, CURLOPT_SSLKEY, tls.client_key_file.c_str());
  if (!tls.client_cert_pem.empty()) SetBlob(h, CURLOPT_SSLCERT_BLOB, tls.client_cert_pem);
  if (!tls.client_key_pem.empty()) SetBlob(h, CURLOPT_SSLKEY_BLOB, tls.client_key_pem);
  const long verify = tls.insecure_skip_verify ? 0L : 1L;
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, verify);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, tls.insecure_skip_verify ? 0L : 2L);
}

}  // namespace

CurlHttpClient::CurlHttpClient() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

namespace {

// A streamed exchange's state: the status is read from the handle once the headers are in, so
// only a 2xx body reaches the handler.
struct StreamSink {
  CURL* handle = nullptr;
  const StreamHandler* handler = nullptr;
  Sink error_body;  // a non-2xx body, capped as Send's
  long status = 0;
  bool stopped = false;
};

size_t OnStreamBody(char* data, size_t size, size_t n, void* user) {
  auto* s = static_cast<StreamSink*>(user);
  const size_t len = size * n;
  if (s->status == 0) curl_easy_getinfo(s->handle, CURLINFO_RESPONSE_CODE, &s->status);
  if (s->status < 200 || s->status >= 300) return OnBody(data, size, n, &s->error_body);
  if (!s->handler->on_data(std::string_view(data, len))) {
    s->stopped = true;
    return 0;
  }
  return len;
}

int OnStreamProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* s = static_cast<StreamSink*>(user);
  if (s->error_body.cancelled && s->error_body.cancelled->load()) return 1;  // Cancel(): an error
  if (s->handler->cancelled && s->handler->cancelled()) {
    s->stopped = true;
    return 1;  // curl aborts with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

// The options every exchange sets; the body's write callback is the caller's.
void SetCommon(CURL* c, const HttpRequest& req, curl_slist* headers, HttpResponse* resp,
               char* detail) {
  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  if (req.method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  if (!req.body.empty() || req.method == "POST" || req.method == "PATCH" || req.method == "PUT") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   std::max<long>(1, static_cast<long>(req.timeout.count() / 1000000)));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // thread-safe timeouts
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, resp);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  SetTls(c, req.tls);
}

using HeaderList = std::unique_ptr<curl_slist, void (*)(curl_slist*)>;

HeaderList MakeHeaders(const HttpRequest& req) {
  curl_slist* headers = nullptr;
  for (const auto& [k, v] : req.headers)
    headers = curl_slist_append(headers, (k + ": " + v).c_str());
  return HeaderList(headers, curl_slist_free_all);
}

}  // namespace

Result<HttpResponse> CurlHttpClient::Send(const HttpRequest& req) {
  std::unique_ptr<CURL, void (*)(CURL*)> h(curl_easy_init(), curl_easy_cleanup);
  if (!h) return Status::Internal("unable to create an HTTP handle for " + req.url);
  if (cancelled_.load()) return Status::Unavailable("unable to send to " + req.url + ": cancelled");
  HttpResponse resp;
  Sink sink{&resp, req.max_body_bytes, false, &cancelled_};
  char detail[CURL_ERROR_SIZE] = {0};
  const HeaderList headers = MakeHeaders(req);
  CURL* c = h.get();
  SetCommon(c, req, headers.get(), &resp, detail);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  // Ask for gzip and decode what comes (libcurl's own decoder, zlib): a server that compresses
  // anyway is read too. Checked after decoding: max_body_bytes bounds the decoded size. (Not in
  // Stream: a compressing server holds a watch's events back until a block fills.)
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
  // A stopping daemon aborts the transfer (Cancel) instead of waiting out a slow server.
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &sink);

  const CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) return TransportError(rc, sink, req, detail);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  resp.status = static_cast<int>(status);
  return resp;
}

Result<HttpResponse> CurlHttpClient::Stream(const HttpRequest& req, const StreamHandler& handler) {
  std::unique_ptr<CURL, void (*)(CURL*)> h(curl_easy_init(), curl_easy_cleanup);
  if (!h) return Status::Internal("unable to create an HTTP handle for " + req.url);
  HttpResponse resp;
  StreamSink sink;
  sink.handle = h.get();
  sink.handler = &handler;
  sink.error_body = Sink{&resp, req.max_body_bytes, false, &cancelled_};
  char detail[CURL_ERROR_SIZE] = {0};
  const HeaderList headers = MakeHeaders(req);
  CURL* c = h.get();
  SetCommon(c, req, headers.get(), &resp, detail);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnStreamBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &OnStreamProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &sink);
  // A peer that vanished without a reset (a node lost, a NAT entry dropped) is noticed within
  // about a minute instead of at the stream's timeout.
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 10L);

  const CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &sink.status);
  resp.status = static_cast<int>(sink.status);
  if (rc != CURLE_OK && !sink.stopped) return TransportError(rc, sink.error_body, req, detail);
  return resp;
}

}  // namespace aiscale
