// FakeKubeApiServer: a wire-level fake of the Kubernetes API server for the Kubernetes actuator's
// tests. It is a fake, not kube-apiserver: Debian ships no kube-apiserver (nor etcd) to run in
// a test, so this serves, over real HTTP(S) on 127.0.0.1, the part of the API the actuator uses,
// with the API server's own wire formats: deployments, statefulsets (apps/v1) and pytorchjobs
// (kubeflow.org/v1) with their /scale subresource (autoscaling/v1 Scale; GET and PATCH with a
// JSON merge patch), nodes, pods and resourcequotas (list), events (create), coordination.k8s.io/v1
// leases (get, create, update, optimistic on metadata.resourceVersion), minimal discovery (/api,
// /apis), bearer-token or client-certificate authentication, and meta/v1 Status bodies for every
// error.
//
// Custom resources (AddCrd: an apiextensions.k8s.io/v1 CRD, e.g. deploy/'s AIScaler) are served
// as the API server serves them: create, get, list (paged with limit/continue), update
// (optimistic on resourceVersion; generation bumped on a spec change), merge patch, delete, the
// /status subresource, each object checked against the CRD's OpenAPI schema (422 Invalid with
// the API server's field errors; unknown fields pruned), Table output for `kubectl get` from
// its additionalPrinterColumns, discovery, and watch: a chunked stream of one JSON event per
// line from a resourceVersion (replayed from a bounded history; older is 410 Gone), BOOKMARK
// events when asked for, timeoutSeconds. Watch faults: 410 storms (as HTTP 410 or as an ERROR
// event), a malformed line, a stream cut mid-event, every open watch cut at once, and a restart
// of the whole server on the same port.
//
// Tests inject faults per request (the next N requests to a method and path answer 409, 429 with
// Retry-After, 500, 403, 404, or hang past the client's timeout) and read back every request
// (verb, group, resource, subresource), e.g. to check the RBAC rules an actuator needs.
// Thread-safe: the server's threads and the test share one mutex.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace aiscale::testing {

// A kubeconfig for a client pointed at a fake: one cluster at `server`, one user with `token`
// (none when empty: kubectl then sends no Authorization over plain HTTP).
std::string FakeKubeconfig(const std::string& server, const std::string& token = "fake-token");

class FakeKubeApiServer {
 public:
  struct Options {
    std::string cert_file;  // with key_file: serve HTTPS
    std::string key_file;
    std::string client_ca_file;        // HTTPS only: require a client certificate signed by it
    std::string token = "fake-token";  // the bearer token accepted; empty: any request
  };
  // One injected answer for the next `count` requests with this method and path.
  struct Fault {
    int status = 500;
    int count = 1;
    int retry_after_s = -1;  // 429: the Retry-After header; -1: none
    bool hang = false;       // hold the request for hang_ms, then answer 504
    int hang_ms = 2000;
  };
  // One request as the API server's authorizer sees it.
  struct Request {
    std::string method;  // GET, PATCH, POST
    std::string verb;    // get, list, patch, create
    std::string group;   // "" for the core group
    std::string version;
    std::string resource;     // plural
    std::string subresource;  // "scale" or empty
    std::string namespace_;
    std::string name;
    std::string path;   // without the query
    std::string query;  // the raw query string (after '?'), e.g. "watch=true"
    std::string content_type;
    std::string body;
    bool authorized = false;
    std::string user;        // whose bearer token it carried (AddToken), "" for the default
    std::string user_agent;  // the User-Agent header
    // Each Lease's holderIdentity when the request arrived, by "namespace/name".
    std::map<std::string, std::string> lease_holders;
    std::chrono::steady_clock::time_point at;
  };

  explicit FakeKubeApiServer(Options options);
  FakeKubeApiServer() : FakeKubeApiServer(Options{}) {}
  ~FakeKubeApiServer();
  FakeKubeApiServer(const FakeKubeApiServer&) = delete;
  FakeKubeApiServer& operator=(const FakeKubeApiServer&) = delete;

  bool Start();  // binds 127.0.0.1 on an ephemeral port and serves on a thread
  bool valid() const { return server_ && server_->is_valid(); }
  std::string Url() const;  // "https://127.0.0.1:PORT" (or http)

  void SetToken(const std::string& token);
  // Accepts `token` too, and records requests that carry it as `user`'s (tell clients apart).
  void AddToken(const std::string& token, const std::string& user);
  // A coordination.k8s.io/v1 Lease, as the API server stores it (null when absent).
  nlohmann::json Lease(const std::string& ns, const std::string& name) const;
  // Objects, stored as the API server returns them (metadata, spec, status).
  void AddDeployment(const std::string& ns, const std::string& name, int replicas, int ready,
                     int gpus_per_pod = 0);
  void AddStatefulSet(const std::string& ns, const std::string& name, int replicas, int ready);
  void AddPyTorchJob(const std::string& ns, const std::string& name, int workers, int active,
                     int gpus_per_worker = 0);
  void AddNode(const std::string& name, int gpus, bool ready = true);
  void AddPod(const std::string& ns, const std::string& name, const std::string& node, int gpus,
              const std::string& phase = "Running");
  // The pod's metadata.ownerReferences: one controller owner (kind ReplicaSet, StatefulSet...).
  void SetPodOwner(const std::string& ns, const std::string& pod, const std::string& kind,
                   const std::string& owner);
  // A ResourceQuota (v1) in `ns` whose spec.hard caps requests.nvidia.com/gpu at `gpus`,
  // listed at /api/v1/resourcequotas and /api/v1/namespaces/{ns}/resourcequotas.
  void AddResourceQuota(const std::string& ns, const std::string& name, int gpus);
  // The stored object (null when absent) and a way to change it (e.g. its status).
  nlohmann::json Object(const std::string& group, const std::string& resource,
                        const std::string& ns, const std::string& name) const;
  void SetObject(const std::string& group, const std::string& resource, const std::string& ns,
                 const std::string& name, nlohmann::json object);

  void InjectFault(const std::string& method, const std::string& path, Fault fault);

  // --- Custom resources (fake_kube_custom.cc) ---
  // Serves the CRD's first served version; false (and `error`) when it cannot be read.
  bool AddCrd(const nlohmann::json& crd, std::string* error = nullptr);
  void RemoveCrds();  // as if the CRD was deleted: its objects and paths are gone (404)
  // Through the same code as the HTTP verbs (validation, versions, watch events): the answer's
  // HTTP status and body. Update is a PUT (status kept); UpdateStatus a PUT of /status.
  std::pair<int, nlohmann::json> CreateCustom(const nlohmann::json& object);
  std::pair<int, nlohmann::json> UpdateCustom(const nlohmann::json& object);
  std::pair<int, nlohmann::json> UpdateStatus(const nlohmann::json& object);
  std::pair<int, nlohmann::json> DeleteCustom(const std::string& group, const std::string& plural,
                                              const std::string& ns, const std::string& name);
  struct WatchFaults {
    int gone_next = 0;           // the next N watch requests answer 410 Gone ...
    bool gone_as_event = false;  // ... as an ERROR event in a 200 stream (the watch cache's way)
    int malformed_next = 0;      // the next N watch streams send a line that is not JSON
    int cut_next = 0;            // the next N watch streams end mid-event after what is due
  };
  void SetWatchFaults(WatchFaults faults);
  // BOOKMARK events to watches that allow them, this often (default 1 s; 0: never).
  void SetBookmarkInterval(std::chrono::milliseconds every);
  // Forgets every event so far: a watch from an older resourceVersion gets 410 Gone.
  void CompactHistory();
  // DeleteCustom and CompactHistory at once: no watch can stream the deletion first, so every
  // open watch ends with 410 Gone and its client has to list again to learn of it.
  std::pair<int, nlohmann::json> DeleteCustomThenCompact(const std::string& group,
                                                         const std::string& plural,
                                                         const std::string& ns,
                                                         const std::string& name);
  // Ends every open watch at once, without the closing chunk (a connection reset).
  void CutWatches();
  int OpenWatches() const;
  // Stops serving (open connections cut), waits `down`, serves again on the same port with the
  // same objects and history. False when the port could not be bound again.
  bool Restart(std::chrono::milliseconds down);
  std::vector<Request> Requests() const;
  void ClearRequests();
  std::vector<nlohmann::json> Events() const;

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // g, r, ns, name
  struct Crd {
    std::string group, version, plural, singular, kind, list_kind;
    std::vector<std::string> short_names;
    bool namespaced = true;
    bool status_subresource = false;
    nlohmann::json schema;   // openAPIV3Schema
    nlohmann::json columns;  // additionalPrinterColumns
  };
  struct HistoryEvent {
    long rv;
    std::string type;  // ADDED, MODIFIED, DELETED
    std::string group, plural, ns;
    nlohmann::json object;
  };
  void MakeServer();
  void Handle(const httplib::Request& req, httplib::Response& res);
  // Custom resources, with mu_ held (fake_kube_custom.cc).
  const Crd* CrdFor(const std::string& group, const std::string& version,
                    const std::string& plural) const;
  const Crd* CrdOf(const std::string& group, const std::string& plural) const;  // any version
  const Crd* CrdOf(const nlohmann::json& object) const;  // by its apiVersion and kind
  // UpdateCustom/UpdateStatus and DeleteCustom(ThenCompact) with mu_ held.
  std::pair<int, nlohmann::json> UpdateOf(const nlohmann::json& object, bool status);
  std::pair<int, nlohmann::json> DeleteOf(const std::string& group, const std::string& plural,
                                          const std::string& ns, const std::string& name);
  void ServeCustom(Request& r, const Crd& crd, const httplib::Request& req, httplib::Response& res);
  void ServeList(Request& r, const Crd& crd, const httplib::Request& req, httplib::Response& res);
  void ServeWatch(Request& r, const Crd& crd, const httplib::Request& req, httplib::Response& res);
  std::pair<int, nlohmann::json> Create(const Crd& crd, const std::string& ns,
                                        nlohmann::json object, bool strict);
  std::pair<int, nlohmann::json> Update(const Crd& crd, const std::string& ns,
                                        const std::string& name, nlohmann::json object,
                                        bool status_only, bool strict);
  std::pair<int, nlohmann::json> Delete(const Crd& crd, const std::string& ns,
                                        const std::string& name);
  std::pair<int, nlohmann::json> Invalid(const Crd& crd, const std::string& name,
                                         const std::vector<std::string>& errors) const;
  std::vector<std::string> Check(const Crd& crd, nlohmann::json& object, bool strict) const;
  void Record(const Crd& crd, const std::string& type, const nlohmann::json& object);
  nlohmann::json Table(const Crd& crd, const std::vector<const nlohmann::json*>& items) const;
  nlohmann::json ResourceList(const std::string& group_version) const;
  // Writes the events after `rv` (and bookmarks) to `sink` until the deadline, a fault, a cut
  // or the server stopping; without mu_ held.
  bool StreamWatch(const std::string& group, const std::string& plural, const std::string& ns,
                   long rv, bool bookmarks, std::chrono::steady_clock::time_point deadline,
                   int fault, httplib::DataSink& sink);
  void Serve(Request& r, const httplib::Request& req, httplib::Response& res);
  void ServeScale(Request& r, nlohmann::json& object, httplib::Response& res);
  void ServeLease(Request& r, httplib::Response& res);
  std::string UserOf(const httplib::Request& req) const;
  bool Authenticate(const httplib::Request& req) const;
  bool TakeFault(const std::string& method, const std::string& path, Fault& out);

  Options options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::map<Key, nlohmann::json> objects_;
  std::map<std::string, nlohmann::json> nodes_;
  std::map<std::pair<std::string, std::string>, nlohmann::json> pods_;
  std::map<std::pair<std::string, std::string>, nlohmann::json> quotas_;
  std::vector<nlohmann::json> events_;
  std::map<std::string, std::string> users_;  // extra bearer token -> user
  std::map<std::pair<std::string, std::string>, Fault> faults_;
  std::vector<Request> requests_;
  long resource_version_ = 1000;
  bool stopping_ = false;
  std::vector<Crd> crds_;
  std::deque<HistoryEvent> history_;
  long history_start_ = 1000;  // a watch from before this version is 410 Gone
  WatchFaults watch_faults_;
  std::chrono::milliseconds bookmark_every_{1000};
  int cut_generation_ = 0;  // bumped by CutWatches and Restart: open watches end
  int open_watches_ = 0;
  long next_uid_ = 1;
  std::condition_variable watch_cv_;
};

// A meta/v1 Status body exactly as the API server writes it.
nlohmann::json KubeStatusBody(int code, const std::string& reason, const std::string& message,
                              const nlohmann::json& details = nlohmann::json::object());

}  // namespace aiscale::testing
