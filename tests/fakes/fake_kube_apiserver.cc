#include "fakes/fake_kube_apiserver.h"

#include <chrono>
#include <sstream>

namespace aiscale::testing {
namespace {

using nlohmann::json;

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream s(path);
  std::string part;
  while (std::getline(s, part, '/')) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::string Qualified(const std::string& group, const std::string& resource) {
  return group.empty() ? resource : resource + "." + group;
}

// The scale subresource's paths into each stored kind (what a CRD's subresources.scale says:
// the training operator marks PyTorchJob specpath=.spec.pytorchReplicaSpecs.Worker.replicas,
// statuspath=.status.replicaStatuses.Worker.active).
struct ScalePaths {
  json::json_pointer spec, status, selector;
};
ScalePaths PathsFor(const std::string& resource) {
  if (resource == "pytorchjobs") {
    return {json::json_pointer("/spec/pytorchReplicaSpecs/Worker/replicas"),
            json::json_pointer("/status/replicaStatuses/Worker/active"),
            json::json_pointer("/status/replicaStatuses/Worker/selector")};
  }
  return {json::json_pointer("/spec/replicas"), json::json_pointer("/status/replicas"),
          json::json_pointer("")};
}

json Metadata(const std::string& ns, const std::string& name, long rv) {
  json m = {{"name", name},
            {"uid", "0c9a3b7e-0000-4000-8000-" + std::to_string(100000000000 + rv)},
            {"resourceVersion", std::to_string(rv)},
            {"generation", 1},
            {"creationTimestamp", "2026-12-01T10:00:00Z"}};
  if (!ns.empty()) m["namespace"] = ns;
  return m;
}

json GpuContainers(const std::string& image, int gpus) {
  json c = {{"name", "main"}, {"image", image}};
  if (gpus > 0) c["resources"] = {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}};
  return json::array({c});
}

void SetJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

void SetStatus(httplib::Response& res, int code, const std::string& reason,
               const std::string& message, const json& details = json::object()) {
  SetJson(res, code, KubeStatusBody(code, reason, message, details));
}

}  // namespace

json KubeStatusBody(int code, const std::string& reason, const std::string& message,
                    const json& details) {
  json j = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
            {"status", "Failure"}, {"message", message}, {"reason", reason}};
  if (!details.empty()) j["details"] = details;
  j["code"] = code;
  return j;
}

FakeKubeApiServer::FakeKubeApiServer(Options options) : options_(std::move(options)) {
  MakeServer();
}

void FakeKubeApiServer::MakeServer() {
  if (!options_.cert_file.empty()) {
    server_ = options_.client_ca_file.empty()
                  ? std::make_unique<httplib::SSLServer>(options_.cert_file.c_str(),
                                                         options_.key_file.c_str())
                  : std::make_unique<httplib::SSLServer>(options_.cert_file.c_str(),
                                                         options_.key_file.c_str(),
                                                         options_.client_ca_file.c_str());
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  // As a real API server's Go net/http does: without it Nagle and delayed ACKs add ~40 ms.
  server_->set_tcp_nodelay(true);
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); };
  server_->Get(".*", handler);
  server_->Post(".*", handler);
  server_->Patch(".*", handler);
  server_->Put(".*", handler);
  server_->Delete(".*", handler);
}

FakeKubeApiServer::~FakeKubeApiServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  watch_cv_.notify_all();
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

bool FakeKubeApiServer::Start() {
  if (!valid()) return false;
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) return false;
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return server_->is_running();
}

std::string FakeKubeconfig(const std::string& server, const std::string& token) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters: [{name: c, cluster: "
         "{server: '" +
         server +
         "'}}]\ncontexts: [{name: t, context: {cluster: c, user: u}}]\nusers: [{name: u, " +
         (token.empty() ? std::string("user: {}") : "user: {token: " + token + "}") + "}]\n";
}

std::string FakeKubeApiServer::Url() const {
  return std::string(options_.cert_file.empty() ? "http" : "https") +
         "://127.0.0.1:" + std::to_string(port_);
}

void FakeKubeApiServer::SetToken(const std::string& token) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.token = token;
}

void FakeKubeApiServer::AddDeployment(const std::string& ns, const std::string& name, int replicas,
                                      int ready, int gpus_per_pod) {
  std::lock_guard<std::mutex> lock(mu_);
  json status = {{"observedGeneration", 1}, {"replicas", replicas}, {"updatedReplicas", replicas}};
  if (ready > 0) status["readyReplicas"] = status["availableReplicas"] = ready;  // omitempty
  objects_[{"apps", "deployments", ns, name}] = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", Metadata(ns, name, ++resource_version_)},
      {"spec",
       {{"replicas", replicas},
        {"selector", {{"matchLabels", {{"app", name}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", name}}}}},
          {"spec", {{"containers", GpuContainers("vllm/vllm-openai:v0.6.3", gpus_per_pod)}}}}}}},
      {"status", status}};
}

void FakeKubeApiServer::AddStatefulSet(const std::string& ns, const std::string& name, int replicas,
                                       int ready) {
  std::lock_guard<std::mutex> lock(mu_);
  json status = {{"observedGeneration", 1}, {"replicas", replicas}, {"currentReplicas", replicas}};
  if (ready > 0) status["readyReplicas"] = status["availableReplicas"] = ready;
  objects_[{"apps", "statefulsets", ns, name}] = {
      {"apiVersion", "apps/v1"},
      {"kind", "StatefulSet"},
      {"metadata", Metadata(ns, name, ++resource_version_)},
      {"spec",
       {{"replicas", replicas},
        {"serviceName", name},
        {"selector", {{"matchLabels", {{"app", name}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", name}}}}},
          {"spec", {{"containers", GpuContainers("redis:7", 0)}}}}}}},
      {"status", status}};
}

void FakeKubeApiServer::AddPyTorchJob(const std::string& ns, const std::string& name, int workers,
                                      int active, int gpus_per_worker) {
  std::lock_guard<std::mutex> lock(mu_);
  const json tmpl = {
      {"spec", {{"containers", GpuContainers("pytorch/pytorch:2.4.0", gpus_per_worker)}}}};
  json worker_status = {
      {"selector", "training.kubeflow.org/job-name=" + name +
                       ",training.kubeflow.org/operator-name=pytorchjob-controller,"
                       "training.kubeflow.org/replica-type=worker"}};
  if (active > 0) worker_status["active"] = active;
  objects_[{"kubeflow.org", "pytorchjobs", ns, name}] = {
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "PyTorchJob"},
      {"metadata", Metadata(ns, name, ++resource_version_)},
      {"spec",
       {{"elasticPolicy", {{"minReplicas", 1}, {"maxReplicas", 16}, {"rdzvBackend", "c10d"}}},
        {"pytorchReplicaSpecs",
         {{"Worker",
           {{"replicas", workers}, {"restartPolicy", "OnFailure"}, {"template", tmpl}}}}}}},
      {"status",
       {{"conditions",
         json::array({{{"type", "Running"}, {"status", "True"}, {"reason", "PyTorchJobRunning"}}})},
        {"replicaStatuses", {{"Worker", worker_status}}},
        {"startTime", "2026-12-01T10:00:05Z"}}}};
}

void FakeKubeApiServer::AddNode(const std::string& name, int gpus, bool ready) {
  std::lock_guard<std::mutex> lock(mu_);
  json alloc = {{"cpu", "96"}, {"memory", "1056300Mi"}, {"pods", "110"}};
  if (gpus > 0) alloc["nvidia.com/gpu"] = std::to_string(gpus);
  nodes_[name] = {
      {"metadata", Metadata("", name, ++resource_version_)},
      {"spec", json::object()},
      {"status",
       {{"allocatable", alloc},
        {"capacity", alloc},
        {"conditions", json::array({{{"type", "Ready"},
                                     {"status", ready ? "True" : "False"},
                                     {"reason", ready ? "KubeletReady" : "KubeletNotReady"}}})}}}};
}

void FakeKubeApiServer::AddPod(const std::string& ns, const std::string& name,
                               const std::string& node, int gpus, const std::string& phase) {
  std::lock_guard<std::mutex> lock(mu_);
  pods_[{ns, name}] = {{"metadata", Metadata(ns, name, ++resource_version_)},
                       {"spec", {{"nodeName", node}, {"containers", GpuContainers("app", gpus)}}},
                       {"status", {{"phase", phase}}}};
}

void FakeKubeApiServer::SetPodOwner(const std::string& ns, const std::string& pod,
                                    const std::string& kind, const std::string& owner) {
  std::lock_guard<std::mutex> lock(mu_);
  json& p = pods_[{ns, pod}];
  p["metadata"]["ownerReferences"] =
      json::array({{{"apiVersion", kind == "PyTorchJob" ? "kubeflow.org/v1" : "apps/v1"},
                    {"kind", kind},
                    {"name", owner},
                    {"uid", "uid-" + owner},
                    {"controller", true},
                    {"blockOwnerDeletion", true}}});
}

void FakeKubeApiServer::AddResourceQuota(const std::string& ns, const std::string& name, int gpus) {
  std::lock_guard<std::mutex> lock(mu_);
  const json hard = {{"requests.nvidia.com/gpu", std::to_string(gpus)}};
  quotas_[{ns, name}] = {{"metadata", Metadata(ns, name, ++resource_version_)},
                         {"spec", {{"hard", hard}}},
                         {"status", {{"hard", hard}}}};
}

json FakeKubeApiServer::Object(const std::string& group, const std::string& resource,
                               const std::string& ns, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = objects_.find({group, resource, ns, name});
  return it == objects_.end() ? json() : it->second;
}

void FakeKubeApiServer::SetObject(const std::string& group, const std::string& resource,
                                  const std::string& ns, const std::string& name, json object) {
  std::lock_guard<std::mutex> lock(mu_);
  objects_[{group, resource, ns, name}] = std::move(object);
}

void FakeKubeApiServer::InjectFault(const std::string& method, const std::string& path,
                                    Fault fault) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_[{method, path}] = fault;
}

std::vector<FakeKubeApiServer::Request> FakeKubeApiServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void FakeKubeApiServer::ClearRequests() {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.clear();
}

std::vector<json> FakeKubeApiServer::Events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

void FakeKubeApiServer::AddToken(const std::string& token, const std::string& user) {
  std::lock_guard<std::mutex> lock(mu_);
  users_[token] = user;
}

json FakeKubeApiServer::Lease(const std::string& ns, const std::string& name) const {
  return Object("coordination.k8s.io", "leases", ns, name);
}

std::string FakeKubeApiServer::UserOf(const httplib::Request& req) const {
  const std::string auth = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (auth.rfind(prefix, 0) != 0) return "";
  auto it = users_.find(auth.substr(prefix.size()));
  return it == users_.end() ? "" : it->second;
}

bool FakeKubeApiServer::Authenticate(const httplib::Request& req) const {
  if (!options_.client_ca_file.empty()) return true;  // the TLS handshake verified the client
  if (!UserOf(req).empty()) return true;
  if (options_.token.empty()) return true;
  return req.get_header_value("Authorization") == "Bearer " + options_.token;
}

bool FakeKubeApiServer::TakeFault(const std::string& method, const std::string& path, Fault& out) {
  auto it = faults_.find({method, path});
  if (it == faults_.end() || it->second.count <= 0) return false;
  out = it->second;
  if (--it->second.count == 0) faults_.erase(it);
  return true;
}

namespace {

// The request as the authorizer sees it: /api/v1/... or /apis/{group}/{version}/..., then
// namespaces/{ns}/{resource}[/{name}[/{subresource}]] or a cluster-wide {resource}[/{name}].
FakeKubeApiServer::Request Parse(const httplib::Request& req) {
  FakeKubeApiServer::Request r;
  r.method = req.method;
  r.path = req.path;
  if (const size_t q = req.target.find('?'); q != std::string::npos) {
    r.query = req.target.substr(q + 1);
  }
  r.body = req.body;
  r.content_type = req.get_header_value("Content-Type");
  const std::vector<std::string> s = Segments(req.path);
  size_t i = 0;
  if (s.size() >= 2 && s[0] == "api") {
    r.version = s[1];
    i = 2;
  } else if (s.size() >= 3 && s[0] == "apis") {
    r.group = s[1];
    r.version = s[2];
    i = 3;
  } else {
    i = s.size();
  }
  if (i + 1 < s.size() && s[i] == "namespaces" && i + 2 < s.size()) {
    r.namespace_ = s[i + 1];
    i += 2;
  }
  if (i < s.size()) r.resource = s[i];
  if (i + 1 < s.size()) r.name = s[i + 1];
  if (i + 2 < s.size()) r.subresource = s[i + 2];
  if (req.method == "GET") r.verb = r.name.empty() ? "list" : "get";
  const std::string watch = req.get_param_value("watch");
  if (req.method == "GET" && r.name.empty() && !watch.empty() && watch != "false" && watch != "0") {
    r.verb = "watch";
  }
  if (req.method == "PATCH") r.verb = "patch";
  if (req.method == "POST") r.verb = "create";
  if (req.method == "PUT") r.verb = "update";
  if (req.method == "DELETE") r.verb = "delete";
  return r;
}

void FaultAnswer(const FakeKubeApiServer::Request& r, const FakeKubeApiServer::Fault& f,
                 httplib::Response& res) {
  const std::string q = Qualified(r.group, r.resource);
  const json details = {{"name", r.name}, {"group", r.group}, {"kind", r.resource}};
  switch (f.status) {
    case 409:
      return SetStatus(res, 409, "Conflict",
                       "Operation cannot be fulfilled on " + q + " \"" + r.name +
                           "\": the object has been modified; please apply your changes to the "
                           "latest version and try again",
                       details);
    case 429: {
      json d = json::object();
      if (f.retry_after_s >= 0) {
        res.set_header("Retry-After", std::to_string(f.retry_after_s));
        d["retryAfterSeconds"] = f.retry_after_s;
      }
      return SetStatus(res, 429, "TooManyRequests", "Too many requests, please try again later.",
                       d);
    }
    case 403: {
      const std::string res_name =
          r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
      return SetStatus(
          res, 403, "Forbidden",
          q + " \"" + r.name + "\" is forbidden: User \"system:serviceaccount:" + r.namespace_ +
              ":aiscale\" cannot " + r.verb + " resource \"" + res_name + "\" in API group \"" +
              r.group + "\" in the namespace \"" + r.namespace_ + "\"",
          details);
    }
    case 404:
      return SetStatus(res, 404, "NotFound", q + " \"" + r.name + "\" not found", details);
    case 503:
      return SetStatus(res, 503, "ServiceUnavailable",
                       "the server is currently unable to handle the request");
    case 504:
      return SetStatus(res, 504, "Timeout",
                       "Timeout: request did not complete within the allotted timeout");
    default:
      return SetStatus(res, f.status, "InternalError", "Internal error occurred: injected fault",
                       {{"causes", json::array({{{"message", "injected fault"}}})}});
  }
}

json Discovery(const std::string& path, int port) {
  if (path == "/api") {
    return {{"kind", "APIVersions"},
            {"versions", json::array({"v1"})},
            {"serverAddressByClientCIDRs",
             json::array({{{"clientCIDR", "0.0.0.0/0"},
                           {"serverAddress", "127.0.0.1:" + std::to_string(port)}}})}};
  }
  json groups = json::array();
  for (const char* g : {"apps", "coordination.k8s.io", "kubeflow.org"}) {
    const json v = {{"groupVersion", std::string(g) + "/v1"}, {"version", "v1"}};
    groups.push_back({{"name", g}, {"versions", json::array({v})}, {"preferredVersion", v}});
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

// "status.phase!=Succeeded,status.phase!=Failed": the phases a pod list leaves out.
std::vector<std::string> ExcludedPhases(const std::string& selector) {
  std::vector<std::string> out;
  std::stringstream s(selector);
  std::string term;
  while (std::getline(s, term, ',')) {
    const std::string prefix = "status.phase!=";
    if (term.rfind(prefix, 0) == 0) out.push_back(term.substr(prefix.size()));
  }
  return out;
}

}  // namespace

void FakeKubeApiServer::Handle(const httplib::Request& req, httplib::Response& res) {
  Request r = Parse(req);
  Fault fault;
  bool faulted = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    r.authorized = Authenticate(req);
    r.user = UserOf(req);
    r.user_agent = req.get_header_value("User-Agent");
    r.at = std::chrono::steady_clock::now();
    for (const auto& [key, obj] : objects_) {
      if (std::get<1>(key) != "leases") continue;
      r.lease_holders[std::get<2>(key) + "/" + std::get<3>(key)] =
          obj.value("spec", json::object()).value("holderIdentity", "");
    }
    requests_.push_back(r);
    if (!r.authorized) {
      return SetStatus(res, 401, "Unauthorized", "Unauthorized");
    }
    faulted = TakeFault(r.method, r.path, fault);
  }
  if (faulted && fault.hang) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(fault.hang_ms);
    while (std::chrono::steady_clock::now() < until) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    fault.status = 504;
  }
  if (faulted) return FaultAnswer(r, fault, res);
  std::lock_guard<std::mutex> lock(mu_);
  Serve(r, req, res);
}

void FakeKubeApiServer::Serve(Request& r, const httplib::Request& req, httplib::Response& res) {
  if (r.path == "/api") return SetJson(res, 200, Discovery(r.path, port_));
  if (r.path == "/apis") {
    json groups = Discovery(r.path, port_);
    for (const Crd& c : crds_) {
      const json v = {{"groupVersion", c.group + "/" + c.version}, {"version", c.version}};
      groups["groups"].push_back(
          {{"name", c.group}, {"versions", json::array({v})}, {"preferredVersion", v}});
    }
    return SetJson(res, 200, groups);
  }
  if (r.name.empty() && r.resource.empty() && !r.version.empty()) {
    json list = ResourceList(r.group.empty() ? r.version : r.group + "/" + r.version);
    if (list.is_null())
      return SetStatus(res, 404, "NotFound", "the server could not find the requested resource");
    return SetJson(res, 200, list);
  }
  if (const Crd* crd = CrdFor(r.group, r.version, r.resource)) {
    return ServeCustom(r, *crd, req, res);
  }
  const std::string q = Qualified(r.group, r.resource);
  const json details = {{"name", r.name}, {"group", r.group}, {"kind", r.resource}};
  if (r.group.empty() && r.resource == "nodes" && r.verb == "list") {
    json list = {{"kind", "NodeList"},
                 {"apiVersion", "v1"},
                 {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
                 {"items", json::array()}};
    for (const auto& [name, n] : nodes_) list["items"].push_back(n);
    return SetJson(res, 200, list);
  }
  if (r.group.empty() && r.resource == "pods" && r.verb == "list") {
    const std::vector<std::string> skip = ExcludedPhases(req.get_param_value("fieldSelector"));
    json list = {{"kind", "PodList"},
                 {"apiVersion", "v1"},
                 {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
                 {"items", json::array()}};
    for (const auto& [key, p] : pods_) {
      const std::string phase = p["status"].value("phase", "");
      if (std::find(skip.begin(), skip.end(), phase) != skip.end()) continue;
      if (!r.namespace_.empty() && key.first != r.namespace_) continue;
      list["items"].push_back(p);
    }
    return SetJson(res, 200, list);
  }
  if (r.group.empty() && r.resource == "resourcequotas" && r.verb == "list") {
    json list = {{"kind", "ResourceQuotaList"},
                 {"apiVersion", "v1"},
                 {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
                 {"items", json::array()}};
    for (const auto& [key, q] : quotas_) {
      if (r.namespace_.empty() || key.first == r.namespace_) list["items"].push_back(q);
    }
    return SetJson(res, 200, list);
  }
  if (r.group.empty() && r.resource == "events" && r.verb == "create") {
    json event = json::parse(r.body, nullptr, false);
    if (!event.is_object() || event.value("kind", "") != "Event") {
      return SetStatus(res, 400, "BadRequest", "the body of the request is not an Event");
    }
    const std::string ns = event["metadata"].value("namespace", r.namespace_);
    const std::string obj_ns = event["involvedObject"].value("namespace", r.namespace_);
    if (ns != r.namespace_ || obj_ns != r.namespace_) {
      return SetStatus(res, 422, "Invalid",
                       "Event \"" + event["metadata"].value("name", "") +
                           "\" is invalid: involvedObject.namespace: Invalid value: \"" + obj_ns +
                           "\": does not match event.namespace");
    }
    event["metadata"]["namespace"] = r.namespace_;
    event["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
    events_.push_back(event);
    return SetJson(res, 201, event);
  }
  if (r.group == "coordination.k8s.io" && r.resource == "leases") return ServeLease(r, res);
  auto it = objects_.find({r.group, r.resource, r.namespace_, r.name});
  if (r.name.empty() || r.namespace_.empty()) {
    return SetStatus(res, 404, "NotFound", "the server could not find the requested resource");
  }
  if (it == objects_.end()) {
    return SetStatus(res, 404, "NotFound", q + " \"" + r.name + "\" not found", details);
  }
  if (r.subresource == "scale") return ServeScale(r, it->second, res);
  if (!r.subresource.empty() || r.verb != "get") {
    return SetStatus(res, 405, "MethodNotAllowed",
                     "the server does not allow this method on the requested resource");
  }
  return SetJson(res, 200, it->second);
}

void FakeKubeApiServer::ServeScale(Request& r, json& object, httplib::Response& res) {
  const ScalePaths p = PathsFor(r.resource);
  auto make_scale = [&] {
    json status = {{"replicas", object.value(p.status, 0)}};
    if (r.resource == "pytorchjobs") {
      status["selector"] = object.value(p.selector, std::string());
    } else {
      std::string sel;
      for (const auto& [k, v] : object["spec"]["selector"]["matchLabels"].items()) {
        sel += (sel.empty() ? "" : ",") + k + "=" + v.get<std::string>();
      }
      status["selector"] = sel;
    }
    json meta = object["metadata"];
    meta.erase("generation");
    return json{{"kind", "Scale"},
                {"apiVersion", "autoscaling/v1"},
                {"metadata", meta},
                {"spec", {{"replicas", object.value(p.spec, 0)}}},
                {"status", status}};
  };
  if (r.verb == "get") return SetJson(res, 200, make_scale());
  if (r.verb != "patch") {
    return SetStatus(res, 405, "MethodNotAllowed",
                     "the server does not allow this method on the requested resource");
  }
  if (r.content_type != "application/merge-patch+json") {
    return SetStatus(res, 415, "UnsupportedMediaType",
                     "the body of the request was in an unknown format - accepted media types "
                     "include: application/json-patch+json, application/merge-patch+json, "
                     "application/apply-patch+yaml");
  }
  const json patch = json::parse(r.body, nullptr, false);
  if (patch.is_discarded()) {
    return SetStatus(res, 400, "BadRequest", "error decoding patch: invalid JSON");
  }
  json scale = make_scale();
  scale.merge_patch(patch);
  const json& want = scale["spec"]["replicas"];
  if (!want.is_number_integer() || want.get<int>() < 0) {
    return SetStatus(res, 422, "Invalid",
                     "Scale.autoscaling \"" + r.name +
                         "\" is invalid: spec.replicas: Invalid "
                         "value: " +
                         want.dump() + ": must be greater than or equal to 0",
                     {{"name", r.name}, {"group", "autoscaling"}, {"kind", "Scale"}});
  }
  if (object.value(p.spec, -1) != want.get<int>()) {
    object[p.spec] = want.get<int>();
    object["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
    object["metadata"]["generation"] = object["metadata"].value("generation", 1) + 1;
  }
  return SetJson(res, 200, make_scale());
}

// Leases as the API server's registry (optimistic concurrency in its generic store) answers:
// create needs a new name (else 409 AlreadyExists), update with a stale
// metadata.resourceVersion is a 409 Conflict, a missing object 404; update without a
// resourceVersion is unconditional (the Lease strategy allows it). Every write bumps it.
void FakeKubeApiServer::ServeLease(Request& r, httplib::Response& res) {
  const std::string q = "leases.coordination.k8s.io";
  const json body = r.body.empty() ? json() : json::parse(r.body, nullptr, false);
  if ((r.verb == "create" || r.verb == "update") &&
      (!body.is_object() || body.value("kind", "") != "Lease")) {
    return SetStatus(res, 400, "BadRequest", "the body of the request is not a Lease");
  }
  std::string name = r.name;
  if (r.verb == "create") name = body.value("metadata", json::object()).value("name", "");
  const json details = {{"name", name}, {"group", "coordination.k8s.io"}, {"kind", "leases"}};
  const Key key{"coordination.k8s.io", "leases", r.namespace_, name};
  auto it = objects_.find(key);
  if (r.verb == "get") {
    if (it == objects_.end())
      return SetStatus(res, 404, "NotFound", q + " \"" + name + "\" not found", details);
    return SetJson(res, 200, it->second);
  }
  if (r.verb == "create") {
    if (!r.name.empty()) {
      return SetStatus(res, 405, "MethodNotAllowed",
                       "the server does not allow this method on the requested resource");
    }
    if (it != objects_.end()) {
      return SetStatus(res, 409, "AlreadyExists", q + " \"" + name + "\" already exists", details);
    }
    json lease = body;
    lease["apiVersion"] = "coordination.k8s.io/v1";
    lease["metadata"] = Metadata(r.namespace_, name, ++resource_version_);
    lease["metadata"].erase("generation");
    objects_[key] = lease;
    return SetJson(res, 201, lease);
  }
  if (r.verb != "update") {
    return SetStatus(res, 405, "MethodNotAllowed",
                     "the server does not allow this method on the requested resource");
  }
  if (it == objects_.end())
    return SetStatus(res, 404, "NotFound", q + " \"" + name + "\" not found", details);
  const std::string want = body.value("metadata", json::object()).value("resourceVersion", "");
  if (!want.empty() && want != it->second["metadata"].value("resourceVersion", "")) {
    return SetStatus(res, 409, "Conflict",
                     "Operation cannot be fulfilled on " + q + " \"" + name +
                         "\": the object has been modified; please apply your changes to the "
                         "latest version and try again",
                     details);
  }
  json lease = it->second;
  lease["spec"] = body.value("spec", json::object());
  lease["metadata"]["resourceVersion"] = std::to_string(++resource_version_);
  it->second = lease;
  return SetJson(res, 200, lease);
}

}  // namespace aiscale::testing
