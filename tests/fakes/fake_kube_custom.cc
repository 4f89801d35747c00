// FakeKubeApiServer's custom resources: CRDs, their objects, the /status subresource, Table
// output, discovery and watch (see fake_kube_apiserver.h).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <sstream>

#include "fakes/fake_kube_apiserver.h"
#include "fakes/openapi_validator.h"

namespace aiscale::testing {
namespace {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

void Answer(httplib::Response& res, const std::pair<int, json>& a) {
  res.status = a.first;
  res.set_content(a.second.dump() + "\n", "application/json");
}

std::pair<int, json> Fail(int code, const std::string& reason, const std::string& message,
                          const json& details = json::object()) {
  return {code, KubeStatusBody(code, reason, message, details)};
}

std::string NowRfc3339() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "5m", "2d": a creationTimestamp as the API server's Table shows a date column.
std::string Age(const std::string& rfc3339) {
  std::tm tm{};
  if (!strptime(rfc3339.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return "<unknown>";
  const long s = static_cast<long>(std::difftime(std::time(nullptr), timegm(&tm)));
  if (s < 120) return std::to_string(std::max(0L, s)) + "s";
  if (s < 2 * 3600) return std::to_string(s / 60) + "m";
  if (s < 2 * 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

// A printer column's jsonPath (".spec.a.b") evaluated on `object`; null when absent.
json At(const json& object, const std::string& path) {
  const json* cur = &object;
  std::stringstream s(path);
  std::string part;
  while (std::getline(s, part, '.')) {
    if (part.empty()) continue;
    if (!cur->is_object() || !cur->contains(part)) return nullptr;
    cur = &(*cur)[part];
  }
  return *cur;
}

bool IsDnsSubdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return std::isalnum(static_cast<unsigned char>(s.front())) &&
         std::isalnum(static_cast<unsigned char>(s.back()));
}

std::string Base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -6;
  for (unsigned char c : in) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out.push_back(k[(val >> bits) & 0x3F]);
      bits -= 6;
    }
  }
  if (bits > -6) out.push_back(k[((val << 8) >> (bits + 8)) & 0x3F]);
  while (out.size() % 4) out.push_back('=');
  return out;
}

std::string Unbase64(const std::string& in) {
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char* p = std::strchr(k, c);
    if (!p || c == 0) break;
    val = (val << 6) + static_cast<int>(p - k);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

}  // namespace

bool FakeKubeApiServer::AddCrd(const json& crd, std::string* error) {
  const auto fail = [&](const std::string& why) {
    if (error) *error = why;
    return false;
  };
  if (!crd.is_object() || crd.value("kind", "") != "CustomResourceDefinition") {
    return fail("not a CustomResourceDefinition");
  }
  const json spec = crd.value("spec", json::object());
  const json names = spec.value("names", json::object());
  Crd c;
  c.group = spec.value("group", "");
  c.plural = names.value("plural", "");
  c.singular = names.value("singular", "");
  c.kind = names.value("kind", "");
  c.list_kind = names.value("listKind", c.kind + "List");
  for (const json& n : names.value("shortNames", json::array())) c.short_names.push_back(n);
  c.namespaced = spec.value("scope", "Namespaced") == "Namespaced";
  for (const json& v : spec.value("versions", json::array())) {
    if (!v.value("served", false)) continue;
    c.version = v.value("name", "");
    c.schema = v.value("schema", json::object()).value("openAPIV3Schema", json::object());
    c.columns = v.value("additionalPrinterColumns", json::array());
    c.status_subresource = v.value("subresources", json::object()).contains("status");
    break;
  }
  if (c.group.empty() || c.plural.empty() || c.kind.empty() || c.version.empty()) {
    return fail("CRD without group, names or a served version");
  }
  std::lock_guard<std::mutex> lock(mu_);
  crds_.push_back(std::move(c));
  return true;
}

void FakeKubeApiServer::RemoveCrds() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Crd& c : crds_) {
    for (auto it = objects_.begin(); it != objects_.end();) {
      it = std::get<0>(it->first) == c.group && std::get<1>(it->first) == c.plural
               ? objects_.erase(it)
               : std::next(it);
    }
  }
  crds_.clear();
  ++cut_generation_;
  watch_cv_.notify_all();
}

const FakeKubeApiServer::Crd* FakeKubeApiServer::CrdFor(const std::string& group,
                                                        const std::string& version,
                                                        const std::string& plural) const {
  for (const Crd& c : crds_) {
    if (c.group == group && c.version == version && c.plural == plural) return &c;
  }
  return nullptr;
}

const FakeKubeApiServer::Crd* FakeKubeApiServer::CrdOf(const std::string& group,
                                                       const std::string& plural) const {
  for (const Crd& c : crds_) {
    if (c.group == group && c.plural == plural) return &c;
  }
  return nullptr;
}

const FakeKubeApiServer::Crd* FakeKubeApiServer::CrdOf(const json& object) const {
  const std::string api = object.value("apiVersion", "");
  const std::string kind = object.value("kind", "");
  for (const Crd& c : crds_) {
    if (c.group + "/" + c.version == api && c.kind == kind) return &c;
  }
  return nullptr;
}

json FakeKubeApiServer::ResourceList(const std::string& gv) const {
  struct R {
    const char* name;
    const char* kind;
    bool namespaced;
  };
  std::vector<R> builtin;
  if (gv == "v1")
    builtin = {{"nodes", "Node", false},
               {"pods", "Pod", true},
               {"events", "Event", true},
               {"namespaces", "Namespace", false}};
  if (gv == "apps/v1")
    builtin = {{"deployments", "Deployment", true}, {"statefulsets", "StatefulSet", true}};
  if (gv == "coordination.k8s.io/v1") builtin = {{"leases", "Lease", true}};
  if (gv == "kubeflow.org/v1") builtin = {{"pytorchjobs", "PyTorchJob", true}};
  const json verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
  json list = {{"kind", "APIResourceList"},
               {"apiVersion", "v1"},
               {"groupVersion", gv},
               {"resources", json::array()}};
  for (const R& r : builtin) {
    std::string singular = r.kind;
    std::transform(singular.begin(), singular.end(), singular.begin(), ::tolower);
    list["resources"].push_back({{"name", r.name},
                                 {"singularName", singular},
                                 {"namespaced", r.namespaced},
                                 {"kind", r.kind},
                                 {"verbs", verbs}});
  }
  for (const Crd& c : crds_) {
    if (c.group + "/" + c.version != gv) continue;
    json r = {{"name", c.plural},
              {"singularName", c.singular},
              {"namespaced", c.namespaced},
              {"kind", c.kind},
              {"verbs", verbs},
              {"shortNames", c.short_names}};
    list["resources"].push_back(r);
    if (c.status_subresource) {
      list["resources"].push_back({{"name", c.plural + "/status"},
                                   {"singularName", ""},
                                   {"namespaced", c.namespaced},
                                   {"kind", c.kind},
                                   {"verbs", {"get", "patch", "update"}}});
    }
  }
  if (list["resources"].empty()) return nullptr;
  return list;
}

std::pair<int, json> FakeKubeApiServer::Invalid(const Crd& crd, const std::string& name,
                                                const std::vector<std::string>& errors) const {
  std::string all;
  json causes = json::array();
  for (const std::string& e : errors) {
    all += (all.empty() ? "" : ", ") + e;
    const size_t colon = e.find(": ");
    causes.push_back({{"reason", "FieldValueInvalid"},
                      {"message", colon == std::string::npos ? e : e.substr(colon + 2)},
                      {"field", e.substr(0, colon)}});
  }
  const std::string qualified = crd.kind + "." + crd.group;
  return Fail(
      422, "Invalid",
      qualified + " \"" + name + "\" is invalid: " + (errors.size() > 1 ? "[" + all + "]" : all),
      {{"name", name}, {"group", crd.group}, {"kind", crd.kind}, {"causes", causes}});
}

// Metadata rules the API server applies to every object, then the CRD's schema (after pruning
// what it does not declare; with strict field validation an undeclared field is an error).
std::vector<std::string> FakeKubeApiServer::Check(const Crd& crd, json& object, bool strict) const {
  std::vector<std::string> errors;
  const json& meta = object["metadata"];
  const std::string name = meta.value("name", "");
  if (!IsDnsSubdomain(name)) {
    errors.push_back("metadata.name: Invalid value: \"" + name.substr(0, 64) +
                     "\": a lowercase RFC 1123 subdomain must consist of lower case "
                     "alphanumeric characters, '-' or '.'");
  }
  size_t annotations = 0;
  const json all_annotations = meta.value("annotations", json::object());
  for (const auto& [k, v] : all_annotations.items()) {
    annotations += k.size() + (v.is_string() ? v.get<std::string>().size() : 0);
  }
  if (annotations > 256 * 1024) {
    errors.push_back("metadata.annotations: Too long: must have at most 262144 bytes");
  }
  json body = object;
  body.erase("metadata");
  body.erase("apiVersion");
  body.erase("kind");
  const std::vector<std::string> unknown = PruneUnknown(crd.schema, body, "");
  if (strict) {
    for (const std::string& u : unknown)
      errors.push_back("." + u + ": field not declared in schema");
  }
  for (std::string& e : ValidateOpenApi(crd.schema, body, "")) errors.push_back(std::move(e));
  for (auto& [k, v] : body.items()) object[k] = v;
  for (const auto& [k, v] : object.items()) {
    if (k != "metadata" && k != "apiVersion" && k != "kind" && !body.contains(k)) {
      errors.push_back("." + k + ": field not declared in schema");
    }
  }
  return errors;
}

void FakeKubeApiServer::Record(const Crd& crd, const std::string& type, const json& object) {
  history_.push_back({resource_version_, type, crd.group, crd.plural,
                      object["metadata"].value("namespace", ""), object});
  while (history_.size() > 100000) {
    history_start_ = history_.front().rv;
    history_.pop_front();
  }
  watch_cv_.notify_all();
}

std::pair<int, json> FakeKubeApiServer::Create(const Crd& crd, const std::string& ns, json object,
                                               bool strict) {
  if (!object.is_object() || object.value("kind", "") != crd.kind) {
    return Fail(400, "BadRequest", "the body of the request is not a " + crd.kind);
  }
  if (!object.contains("metadata") || !object["metadata"].is_object()) {
    object["metadata"] = json::object();
  }
  json& meta = object["metadata"];
  const std::string name = meta.value("name", "");
  if (crd.namespaced) meta["namespace"] = ns;
  object.erase("status");  // the status subresource: create ignores it
  std::vector<std::string> errors = Check(crd, object, strict);
  if (!errors.empty()) return Invalid(crd, name, errors);
  const Key key{crd.group, crd.plural, ns, name};
  if (objects_.count(key)) {
    return Fail(409, "AlreadyExists",
                crd.plural + "." + crd.group + " \"" + name + "\" already exists",
                {{"name", name}, {"group", crd.group}, {"kind", crd.plural}});
  }
  char uid[64];
  std::snprintf(uid, sizeof uid, "7d3c0f1e-%04lx-4a00-8000-%012lx", next_uid_ % 0xffff, next_uid_);
  ++next_uid_;
  meta["uid"] = uid;
  meta["resourceVersion"] = std::to_string(++resource_version_);
  meta["generation"] = 1;
  meta["creationTimestamp"] = NowRfc3339();
  object["apiVersion"] = crd.group + "/" + crd.version;
  objects_[key] = object;
  Record(crd, "ADDED", object);
  return {201, object};
}

std::pair<int, json> FakeKubeApiServer::Update(const Crd& crd, const std::string& ns,
                                               const std::string& name, json object,
                                               bool status_only, bool strict) {
  const auto it = objects_.find({crd.group, crd.plural, ns, name});
  const json details = {{"name", name}, {"group", crd.group}, {"kind", crd.plural}};
  if (it == objects_.end()) {
    return Fail(404, "NotFound", crd.plural + "." + crd.group + " \"" + name + "\" not found",
                details);
  }
  if (!object.is_object()) return Fail(400, "BadRequest", "the body is not an object");
  const std::string want = object.value("metadata", json::object()).value("resourceVersion", "");
  json& stored = it->second;
  if (!want.empty() && want != stored["metadata"].value("resourceVersion", "")) {
    return Fail(409, "Conflict",
                "Operation cannot be fulfilled on " + crd.plural + "." + crd.group + " \"" + name +
                    "\": the object has been modified; please apply your changes to the "
                    "latest version and try again",
                details);
  }
  json next = stored;
  if (status_only) {
    next["status"] = object.value("status", json());
  } else {
    for (const char* f : {"labels", "annotations"}) {
      const json meta = object.value("metadata", json::object());
      if (meta.contains(f))
        next["metadata"][f] = meta[f];
      else
        next["metadata"].erase(f);
    }
    next["spec"] = object.value("spec", json());
  }
  std::vector<std::string> errors = Check(crd, next, strict && !status_only);
  if (!errors.empty()) return Invalid(crd, name, errors);
  if (next == stored) return {200, stored};  // a no-op write changes no version
  if (next.value("spec", json()) != stored.value("spec", json())) {
    next["metadata"]["generation"] = stored["metadata"].value("generation", 1) + 1;
  }
  next["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
  stored = next;
  Record(crd, "MODIFIED", stored);
  return {200, stored};
}

std::pair<int, json> FakeKubeApiServer::Delete(const Crd& crd, const std::string& ns,
                                               const std::string& name) {
  const auto it = objects_.find({crd.group, crd.plural, ns, name});
  if (it == objects_.end()) {
    return Fail(404, "NotFound", crd.plural + "." + crd.group + " \"" + name + "\" not found",
                {{"name", name}, {"group", crd.group}, {"kind", crd.plural}});
  }
  json gone = it->second;
  objects_.erase(it);
  gone["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
  Record(crd, "DELETED", gone);
  return {200, gone};
}

json FakeKubeApiServer::Table(const Crd& crd, const std::vector<const json*>& items) const {
  json defs = json::array({{{"name", "Name"},
                            {"type", "string"},
                            {"format", "name"},
                            {"description", "Name must be unique within a namespace."},
                            {"priority", 0}}});
  for (const json& c : crd.columns) {
    defs.push_back({{"name", c.value("name", "")},
                    {"type", c.value("type", "string")},
                    {"format", ""},
                    {"description", c.value("description", "")},
                    {"priority", c.value("priority", 0)}});
  }
  json rows = json::array();
  for (const json* o : items) {
    json cells = json::array({(*o)["metadata"].value("name", "")});
    for (const json& c : crd.columns) {
      json v = At(*o, c.value("jsonPath", ""));
      if (c.value("type", "") == "date" && v.is_string()) v = Age(v.get<std::string>());
      cells.push_back(v);
    }
    json meta = (*o)["metadata"];
    rows.push_back({{"cells", cells},
                    {"object",
                     {{"kind", "PartialObjectMetadata"},
                      {"apiVersion", "meta.k8s.io/v1"},
                      {"metadata", meta}}}});
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
          {"columnDefinitions", defs},
          {"rows", rows}};
}

void FakeKubeApiServer::ServeList(Request& r, const Crd& crd, const httplib::Request& req,
                                  httplib::Response& res) {
  const std::string cont = req.get_param_value("continue");
  const std::string limit_text = req.get_param_value("limit");
  const size_t limit = limit_text.empty() ? 0 : std::stoul(limit_text);
  long list_rv = resource_version_;
  std::pair<std::string, std::string> after;  // (namespace, name) of the last item sent
  if (!cont.empty()) {
    const json token = json::parse(Unbase64(cont), nullptr, false);
    if (!token.is_object() || token.value("rv", 0L) < history_start_) {
      return Answer(res, Fail(410, "Expired",
                              "The provided continue parameter is too old to display a "
                              "consistent list result. You can start a new list without the "
                              "continue parameter."));
    }
    list_rv = token.value("rv", 0L);
    after = {token.value("ns", ""), token.value("name", "")};
  }
  std::vector<const json*> items;
  std::pair<std::string, std::string> last;
  bool more = false;
  for (const auto& [key, obj] : objects_) {
    if (std::get<0>(key) != crd.group || std::get<1>(key) != crd.plural) continue;
    if (!r.namespace_.empty() && std::get<2>(key) != r.namespace_) continue;
    const std::pair<std::string, std::string> k{std::get<2>(key), std::get<3>(key)};
    if (!cont.empty() && k <= after) continue;
    if (limit > 0 && items.size() == limit) {
      more = true;
      break;
    }
    items.push_back(&obj);
    last = k;
  }
  if (req.get_header_value("Accept").find("as=Table") != std::string::npos) {
    return Answer(res, {200, Table(crd, items)});
  }
  json list = {{"kind", crd.list_kind},
               {"apiVersion", crd.group + "/" + crd.version},
               {"metadata", {{"resourceVersion", std::to_string(list_rv)}}},
               {"items", json::array()}};
  if (more) {
    list["metadata"]["continue"] =
        Base64(json{{"rv", list_rv}, {"ns", last.first}, {"name", last.second}}.dump());
  }
  for (const json* o : items) list["items"].push_back(*o);
  return Answer(res, {200, list});
}

void FakeKubeApiServer::ServeCustom(Request& r, const Crd& crd, const httplib::Request& req,
                                    httplib::Response& res) {
  const bool strict = req.get_param_value("fieldValidation") == "Strict";
  if (r.verb == "watch") return ServeWatch(r, crd, req, res);
  if (r.verb == "list") return ServeList(r, crd, req, res);
  const json body = r.body.empty() ? json() : json::parse(r.body, nullptr, false);
  if (r.verb == "create") {
    if (!r.name.empty() || (crd.namespaced && r.namespace_.empty())) {
      return Answer(res, Fail(405, "MethodNotAllowed",
                              "the server does not allow this method on the requested resource"));
    }
    return Answer(res, Create(crd, r.namespace_, body, strict));
  }
  const bool status = r.subresource == "status";
  if ((status && !crd.status_subresource) || (!status && !r.subresource.empty())) {
    return Answer(res, Fail(404, "NotFound", "the server could not find the requested resource"));
  }
  const auto it = objects_.find({crd.group, crd.plural, r.namespace_, r.name});
  if (r.verb == "get") {
    if (it == objects_.end()) {
      return Answer(
          res, Fail(404, "NotFound", crd.plural + "." + crd.group + " \"" + r.name + "\" not found",
                    {{"name", r.name}, {"group", crd.group}, {"kind", crd.plural}}));
    }
    if (req.get_header_value("Accept").find("as=Table") != std::string::npos) {
      return Answer(res, {200, Table(crd, {&it->second})});
    }
    return Answer(res, {200, it->second});
  }
  if (r.verb == "update")
    return Answer(res, Update(crd, r.namespace_, r.name, body, status, strict));
  if (r.verb == "patch") {
    if (r.content_type != "application/merge-patch+json") {
      return Answer(res, Fail(415, "UnsupportedMediaType",
                              "the body of the request was in an unknown format - accepted media "
                              "types include: application/merge-patch+json"));
    }
    if (it == objects_.end() || !body.is_object()) {
      return Answer(res, Update(crd, r.namespace_, r.name, body, status, strict));
    }
    json patched = it->second;
    patched.merge_patch(body);
    return Answer(res, Update(crd, r.namespace_, r.name, patched, status, strict));
  }
  if (r.verb == "delete") return Answer(res, Delete(crd, r.namespace_, r.name));
  return Answer(res, Fail(405, "MethodNotAllowed",
                          "the server does not allow this method on the requested resource"));
}

void FakeKubeApiServer::ServeWatch(Request& r, const Crd& crd, const httplib::Request& req,
                                   httplib::Response& res) {
  const std::string rv_text = req.get_param_value("resourceVersion");
  long rv = -1;  // "" or "0": the current objects first, as ADDED events
  if (!rv_text.empty() && rv_text != "0") {
    char* end = nullptr;
    rv = std::strtol(rv_text.c_str(), &end, 10);
    if (!end || *end != '\0' || rv < 0) {
      return Answer(res, Fail(400, "BadRequest", "invalid resource version: " + rv_text));
    }
  }
  bool gone = rv >= 0 && rv < history_start_;
  if (watch_faults_.gone_next > 0) {
    --watch_faults_.gone_next;
    gone = true;
  }
  const std::string message =
      "too old resource version: " + rv_text + " (" + std::to_string(history_start_) + ")";
  if (gone && !watch_faults_.gone_as_event) return Answer(res, Fail(410, "Expired", message));
  int fault = 0;
  if (!gone && watch_faults_.malformed_next > 0) {
    --watch_faults_.malformed_next;
    fault = 1;
  } else if (!gone && watch_faults_.cut_next > 0) {
    --watch_faults_.cut_next;
    fault = 2;
  }
  const std::string timeout = req.get_param_value("timeoutSeconds");
  const auto deadline =
      SteadyClock::now() + std::chrono::seconds(timeout.empty() ? 1800 : std::stol(timeout));
  const bool bookmarks = req.get_param_value("allowWatchBookmarks") == "true";
  if (gone) {
    const std::string line =
        json{{"type", "ERROR"}, {"object", KubeStatusBody(410, "Expired", message)}}.dump() + "\n";
    res.set_chunked_content_provider("application/json", [line](size_t, httplib::DataSink& sink) {
      sink.write(line.data(), line.size());
      sink.done();
      return true;
    });
    return;
  }
  res.set_chunked_content_provider(
      "application/json", [this, group = crd.group, plural = crd.plural, ns = r.namespace_, rv,
                           bookmarks, deadline, fault](size_t, httplib::DataSink& sink) {
        return StreamWatch(group, plural, ns, rv, bookmarks, deadline, fault, sink);
      });
}

bool FakeKubeApiServer::StreamWatch(const std::string& group, const std::string& plural,
                                    const std::string& ns, long rv, bool bookmarks,
                                    SteadyClock::time_point deadline, int fault,
                                    httplib::DataSink& sink) {
  std::unique_lock<std::mutex> lock(mu_);
  const int generation = cut_generation_;
  ++open_watches_;
  const auto finish = [&](bool ok) {
    --open_watches_;
    return ok;
  };
  const Crd* crd = CrdOf(group, plural);
  std::vector<std::string> lines;
  long sent = rv;
  if (rv < 0) {
    for (const auto& [key, obj] : objects_) {
      if (std::get<0>(key) != group || std::get<1>(key) != plural) continue;
      if (!ns.empty() && std::get<2>(key) != ns) continue;
      lines.push_back(json{{"type", "ADDED"}, {"object", obj}}.dump());
    }
    sent = resource_version_;
  }
  if (fault == 1) lines.push_back("{\"type\": \"ADDED\", \"object\": {not json");
  auto last_bookmark = SteadyClock::now();
  for (;;) {
    if (sent + 1 < history_start_) {
      // Compacted past events this watch had not sent yet: etcd cancels such a watcher, and
      // the API server ends its stream with 410 Gone (a live watch never skips an event).
      const std::string message = "too old resource version: " + std::to_string(sent) + " (" +
                                  std::to_string(history_start_) + ")";
      lines.push_back(
          json{{"type", "ERROR"}, {"object", KubeStatusBody(410, "Expired", message)}}.dump());
      lock.unlock();
      for (const std::string& l : lines) {
        const std::string text = l + "\n";
        if (!sink.write(text.data(), text.size())) break;
      }
      sink.done();
      lock.lock();
      return finish(true);
    }
    const auto first = std::upper_bound(history_.begin(), history_.end(), sent,
                                        [](long v, const HistoryEvent& e) { return v < e.rv; });
    for (auto e = first; e != history_.end(); ++e) {
      sent = e->rv;
      if (e->group != group || e->plural != plural || (!ns.empty() && e->ns != ns)) continue;
      lines.push_back(json{{"type", e->type}, {"object", e->object}}.dump());
    }
    const auto now = SteadyClock::now();
    if (bookmarks && crd && bookmark_every_.count() > 0 && now - last_bookmark >= bookmark_every_) {
      sent = std::max(sent, resource_version_);
      lines.push_back(json{{"type", "BOOKMARK"},
                           {"object",
                            {{"kind", crd->kind},
                             {"apiVersion", crd->group + "/" + crd->version},
                             {"metadata", {{"resourceVersion", std::to_string(sent)}}}}}}
                          .dump());
      last_bookmark = now;
    }
    lock.unlock();
    for (const std::string& l : lines) {
      const std::string text = l + "\n";
      if (!sink.write(text.data(), text.size())) {
        lock.lock();
        return finish(false);
      }
    }
    lines.clear();
    if (fault == 2) {
      const std::string half = "{\"type\": \"MODIFIED\", \"object\": {\"metadata\": {\"na";
      sink.write(half.data(), half.size());
      lock.lock();
      return finish(false);
    }
    lock.lock();
    if (stopping_ || cut_generation_ != generation) return finish(false);
    if (SteadyClock::now() >= deadline) {
      sink.done();
      return finish(true);
    }
    watch_cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

std::pair<int, json> FakeKubeApiServer::CreateCustom(const json& object) {
  std::lock_guard<std::mutex> lock(mu_);
  const Crd* c = CrdOf(object);
  if (!c) {
    return Fail(404, "NotFound",
                "no CRD serves " + object.value("apiVersion", "") + " " + object.value("kind", ""));
  }
  return Create(*c, object.value("metadata", json::object()).value("namespace", ""), object, false);
}

std::pair<int, json> FakeKubeApiServer::UpdateCustom(const json& object) {
  std::lock_guard<std::mutex> lock(mu_);
  return UpdateOf(object, false);
}

std::pair<int, json> FakeKubeApiServer::UpdateStatus(const json& object) {
  std::lock_guard<std::mutex> lock(mu_);
  return UpdateOf(object, true);
}

std::pair<int, json> FakeKubeApiServer::UpdateOf(const json& object, bool status) {
  const json meta = object.value("metadata", json::object());
  const Crd* c = CrdOf(object);
  if (!c) return Fail(404, "NotFound", "no CRD serves this object");
  return Update(*c, meta.value("namespace", ""), meta.value("name", ""), object, status, false);
}

std::pair<int, json> FakeKubeApiServer::DeleteCustom(const std::string& group,
                                                     const std::string& plural,
                                                     const std::string& ns,
                                                     const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  return DeleteOf(group, plural, ns, name);
}

std::pair<int, json> FakeKubeApiServer::DeleteOf(const std::string& group,
                                                 const std::string& plural, const std::string& ns,
                                                 const std::string& name) {
  const Crd* c = CrdOf(group, plural);
  if (!c) return Fail(404, "NotFound", "no CRD serves " + plural + "." + group);
  return Delete(*c, ns, name);
}

std::pair<int, json> FakeKubeApiServer::DeleteCustomThenCompact(const std::string& group,
                                                                const std::string& plural,
                                                                const std::string& ns,
                                                                const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto answer = DeleteOf(group, plural, ns, name);
  if (!CrdOf(group, plural)) return answer;  // no such CRD: no history of it to compact
  history_.clear();
  history_start_ = ++resource_version_;
  watch_cv_.notify_all();
  return answer;
}

void FakeKubeApiServer::SetWatchFaults(WatchFaults faults) {
  std::lock_guard<std::mutex> lock(mu_);
  watch_faults_ = faults;
}

void FakeKubeApiServer::SetBookmarkInterval(std::chrono::milliseconds every) {
  std::lock_guard<std::mutex> lock(mu_);
  bookmark_every_ = every;
}

void FakeKubeApiServer::CompactHistory() {
  std::lock_guard<std::mutex> lock(mu_);
  history_.clear();
  history_start_ = ++resource_version_;
}

void FakeKubeApiServer::CutWatches() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++cut_generation_;
  }
  watch_cv_.notify_all();
}

int FakeKubeApiServer::OpenWatches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_watches_;
}

bool FakeKubeApiServer::Restart(std::chrono::milliseconds down) {
  CutWatches();
  server_->stop();
  if (thread_.joinable()) thread_.join();
  std::this_thread::sleep_for(down);
  MakeServer();
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (server_->bind_to_port("127.0.0.1", port_)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (attempt == 199) return false;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return server_->is_running();
}

}  // namespace aiscale::testing
