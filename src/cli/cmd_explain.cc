// aiscale explain NAME [--config FILE | --url URL] [--limit N]: the last decisions of one
// workload in words, newest first: when, what was seen, what the policy recommended and why,
// what stabilization and constraints changed, and what was done.
//
// Reads the decisions from the store named in a controller config (the SQLite file that
// `aiscale run` writes; opened beside a running daemon, which WAL allows) or from a running
// daemon's API. Exit status: 0 printed, 1 nothing to explain or an error (no store, unknown
// workload, server unreachable), 2 usage.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/controller_config.h"
#include "core/config/config_node.h"
#include "core/curl_http_client.h"
#include "core/decision_codec.h"
#include "server/api_handlers.h"
#include "server/html.h"
#include "server/json_views.h"
#include "store/sqlite_store.h"

namespace aiscale::cli {
namespace {

constexpr size_t kDefaultLimit = 5;

struct ExplainFlags {
  std::string name;
  std::string config;
  std::string url;
  size_t limit = kDefaultLimit;
};

int ExplainUsage(std::ostream& os, int code) {
  os << "usage: aiscale explain NAME (--config FILE | --url URL) [--limit N]\n\n"
        "Prints the last N (default "
     << kDefaultLimit
     << ") decisions of workload NAME (namespace/name or a plain name),\n"
        "newest first.\n"
        "  --config FILE  read them from the store (spec.store) of this controller config\n"
        "  --url URL      ask a running `aiscale run`, e.g. http://127.0.0.1:9464\n"
        "Exit status: 0 printed, 1 nothing found or an error, 2 usage.\n";
  return code;
}

// Returns false (after printing why) on a usage error.
bool ParseExplainFlags(const Args& args, ExplainFlags& f) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= args.size()) {
        std::cerr << "aiscale explain: " << a << " needs a value\n";
        return false;
      }
      dst = args[++i];
      return true;
    };
    std::string limit;
    if (a == "--config") {
      if (!value(f.config)) return false;
    } else if (a == "--url") {
      if (!value(f.url)) return false;
    } else if (a == "--limit") {
      if (!value(limit)) return false;
      auto n = server::ParseLimit(limit);
      if (!n.ok()) {
        std::cerr << "aiscale explain: " << n.status().message() << "\n";
        return false;
      }
      f.limit = *n;
    } else if (f.name.empty() && !a.empty() && a[0] != '-') {
      f.name = a;
    } else {
      std::cerr << "aiscale explain: unexpected argument '" << a << "'\n";
      return false;
    }
  }
  if (f.name.empty() || f.config.empty() == f.url.empty()) {
    std::cerr << "aiscale explain: needs a workload NAME and one of --config or --url\n";
    return false;
  }
  return true;
}

// The workload key NAME means in the config: itself, or the key of the only workload with
// that plain name; NAME unchanged when no workload matches (one that has left the config
// may still have decisions).
Result<std::string> KeyInConfig(const ControllerConfig& cfg, const std::string& name) {
  std::vector<std::string> matches;
  for (const WorkloadSpec& w : cfg.workloads) {
    if (w.ref.Key() == name) return name;
    if (w.ref.name == name) matches.push_back(w.ref.Key());
  }
  if (matches.size() > 1) {
    std::string keys;
    for (const auto& k : matches) keys += (keys.empty() ? "" : ", ") + k;
    return Status::Invalid("workload name '" + name +
                           "' is ambiguous; use namespace/name, one of: " + keys);
  }
  return matches.empty() ? name : matches[0];
}

Result<std::vector<Decision>> FromStore(const ExplainFlags& f) {
  config::ConfigErrors errors;
  const config::ConfigNode root = config::LoadConfigFile(f.config, errors);
  auto cfg = errors.empty() ? ParseControllerConfig(root)
                            : Result<ControllerConfig>(Status::Invalid("unreadable"));
  if (!cfg.ok()) {
    return Status::Invalid("unable to read controller config " + f.config + ":\n" +
                           errors.ToStatus().message());
  }
  if (cfg->store_path.empty()) {
    return Status::NotFound("no store configured in " + f.config +
                            ": decisions are recorded only when spec.store names a file");
  }
  std::error_code ec;
  if (!std::filesystem::exists(cfg->store_path, ec)) {
    return Status::NotFound("store " + cfg->store_path + " (spec.store of " + f.config +
                            ") does not exist: has `aiscale run` written to it yet?");
  }
  ASSIGN_OR_RETURN(const std::string key, KeyInConfig(*cfg, f.name));
  ASSIGN_OR_RETURN(auto store, store::SqliteStore::Open(cfg->store_path));
  ASSIGN_OR_RETURN(std::vector<Decision> recent, store->Recent(key, f.limit));
  if (recent.empty()) {
    return Status::NotFound("unknown workload '" + f.name + "': no decisions recorded for '" + key +
                            "' in " + cfg->store_path);
  }
  std::reverse(recent.begin(), recent.end());  // the Store gives newest last
  return recent;
}

// The server's error message when the body is its JSON error, else the raw body.
std::string ServerMessage(const HttpResponse& r) {
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object() &&
      j["error"].contains("message") && j["error"]["message"].is_string()) {
    return j["error"]["message"].get<std::string>();
  }
  return r.body.substr(0, 200);
}

Result<std::vector<Decision>> FromServer(const ExplainFlags& f) {
  std::string base = f.url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  HttpRequest req;
  req.url = base + "/api/v1/workloads/" + server::UrlEncode(f.name) +
            "/decisions?limit=" + std::to_string(f.limit);
  req.timeout = Seconds(10);
  CurlHttpClient client;
  auto resp = client.Send(req);
  if (!resp.ok()) return resp.status().Wrap("unable to reach aiscale server at " + f.url);
  if (resp->status != 200) {
    return StatusFromHttp(resp->status, "server " + f.url + " answered " +
                                            std::to_string(resp->status) + ": " +
                                            ServerMessage(*resp));
  }
  const auto j = nlohmann::json::parse(resp->body, nullptr, false);
  if (!j.is_object() || !j.contains("decisions") || !j["decisions"].is_array()) {
    return Status::Invalid("server " + f.url + " answered with no decision list");
  }
  std::vector<Decision> out;
  for (const auto& item : j["decisions"]) {
    ASSIGN_OR_RETURN(Decision d, DecisionFromJson(item));
    out.push_back(std::move(d));
  }
  if (out.empty()) return Status::NotFound("no decisions recorded yet for '" + f.name + "'");
  return out;
}

std::string Num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string Seen(const Decision& d) {
  if (d.inputs.empty()) return "no signals";
  std::string out;
  for (const SignalInput& in : d.inputs) {
    if (!out.empty()) out += "; ";
    out += in.name;
    if (HasValues(in.status)) {
      out += " = " + Num(in.value);
      if (in.instances > 1) {
        out += " (mean of " + std::to_string(in.instances) + ", sum " + Num(in.sum) + ")";
      }
    } else {
      out += " " + std::string(SignalStatusName(in.status)) + " (not data)";
    }
    if (!in.detail.empty()) out += ": " + in.detail;
  }
  return out;
}

std::string Done(const Decision& d) {
  const std::string detail = d.action_detail.empty() ? "" : " (" + d.action_detail + ")";
  switch (d.action) {
    case Action::kScaled:
      return "scaled from " + std::to_string(d.current) + " to " + std::to_string(d.constrained) +
             detail;
    case Action::kFailed:
      return "tried to scale from " + std::to_string(d.current) + " to " +
             std::to_string(d.constrained) + " and failed" + detail;
    case Action::kNone:
      break;
  }
  return "nothing; stays at " + std::to_string(d.current) + detail;
}

// One decision as a short paragraph.
void Describe(std::ostream& os, const Decision& d) {
  const std::string wall = FormatWallTime(d.wall);
  // Wall time when the daemon stamped it; the monotonic t only for simulator records.
  os << (wall.empty() ? "t=" + Num(SinceEpochSeconds(d.at)) + "s" : wall) << "  " << d.workload
     << "  policy " << d.policy << "  scale " << d.current << " (" << d.ready << " ready)\n";
  if (d.unchanged_ticks > 0) os << "  " << d.UnchangedText() << "\n";  // a store heartbeat
  os << "  seen:        " << Seen(d) << "\n";
  const Recommendation& r = d.recommendation;
  if (r.valid) {
    os << "  recommended: " << r.desired << " by rule " << r.rule << ": " << r.reason << "\n";
  } else {
    os << "  recommended: nothing valid (rule " << r.rule << "): " << r.reason
       << "; the current scale is kept\n";
  }
  if (!r.facts.empty()) {
    os << "  facts:      ";
    for (const auto& [k, v] : r.facts) os << " " << k << "=" << Num(v);
    os << "\n";
  }
  const int before_stabilize = r.valid ? r.desired : d.current;
  if (d.stabilized != before_stabilize || !d.stabilize_reason.empty()) {
    os << "  stabilized:  " << d.stabilized
       << (d.stabilize_reason.empty() ? "" : " (" + d.stabilize_reason + ")") << "\n";
  }
  // In a shared pool, the constraints' result is what the workload wanted; the pool granted.
  const int wanted = d.pool.active ? d.pool.wanted : d.constrained;
  if (wanted != d.stabilized || !d.constrain_reason.empty()) {
    os << "  constrained: " << wanted
       << (d.constrain_reason.empty() ? "" : " (" + d.constrain_reason + ")") << "\n";
  }
  if (d.pool.active) {
    os << "  pool:        granted " << d.pool.granted << " of " << d.pool.wanted << " (tenant "
       << d.pool.tenant << ", " << d.pool.reason << ")"
       << (d.pool.detail.empty() ? "" : ": " + d.pool.detail) << "\n";
  }
  os << "  done:        " << Done(d) << "\n";
}

}  // namespace

int Explain(const Args& args) {
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") return ExplainUsage(std::cout, 0);
  }
  ExplainFlags f;
  if (!ParseExplainFlags(args, f)) return ExplainUsage(std::cerr, 2);
  auto decisions = f.url.empty() ? FromStore(f) : FromServer(f);
  if (!decisions.ok()) {
    std::cerr << "aiscale explain: " << decisions.status().message() << "\n";
    return 1;
  }
  std::cout << "Last " << decisions->size() << " decision" << (decisions->size() == 1 ? "" : "s")
            << " of " << decisions->front().workload << ", newest first:\n";
  for (const Decision& d : *decisions) {
    std::cout << "\n";
    Describe(std::cout, d);
  }
  return 0;
}

}  // namespace aiscale::cli
