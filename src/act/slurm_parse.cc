#include "act/slurm_parse.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <nlohmann/json.hpp>

namespace aiscale::act {
namespace {

using nlohmann::json;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Str(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  return "";
}

// The document's "errors" array as one Unavailable status (Slurm could not answer); ok when
// there are none.
Status SlurmErrors(const json& doc, const std::string& what) {
  auto it = doc.find("errors");
  if (it == doc.end() || !it->is_array() || it->empty()) return Status::Ok();
  std::string msg;
  for (const json& e : *it) {
    if (!msg.empty()) msg += "; ";
    msg += Str(e, "source").empty() ? "" : Str(e, "source") + ": ";
    msg += Str(e, "description").empty() ? Str(e, "error") : Str(e, "description");
  }
  return Status::Unavailable(what + " reported: " + msg);
}

// Parses `text` as a JSON object holding an array under `key`; kInvalid otherwise.
Result<json> ParseDocument(std::string_view text, const char* key, const std::string& what) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::Invalid(what + " output is not a JSON object");
  }
  RETURN_IF_ERROR(SlurmErrors(doc, what));
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) {
    return Status::Invalid(what + " output has no '" + key + "' array");
  }
  return doc;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// Splits `line` at the first `n - 1` '|'; the last field keeps the rest.
std::optional<std::vector<std::string>> SplitFields(std::string_view line, size_t n) {
  std::vector<std::string> f;
  while (f.size() + 1 < n) {
    const size_t bar = line.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    f.emplace_back(line.substr(0, bar));
    line.remove_prefix(bar + 1);
  }
  f.emplace_back(line);
  return f;
}

std::string NullToEmpty(std::string s) { return s == "(null)" ? "" : s; }

Result<int> NodeGpus(const std::string& node, const std::string& gres) {
  const std::optional<int> gpus = GresGpus(gres);
  if (!gpus) {
    return Status::Invalid("sinfo output: node " + node + ": unreadable GPU count in gres '" +
                           gres + "'");
  }
  return *gpus;
}

// Node state flags (22.05 `state_flags`) under which an idle node takes no new job.
bool FlagBlocksJobs(const std::string& flag) {
  static const std::set<std::string> kBlocking = {
      "DRAIN",       "DRAINING",       "DRAINED",          "FAIL",
      "MAINTENANCE", "NOT_RESPONDING", "POWERED_DOWN",     "POWERING_DOWN",
      "POWER_DOWN",  "POWERING_UP",    "REBOOT_REQUESTED", "REBOOT_ISSUED",
      "RESERVED",    "COMPLETING",     "PLANNED"};
  return kBlocking.count(flag) > 0;
}

}  // namespace

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  ASSIGN_OR_RETURN(json doc, ParseDocument(text, "jobs", "squeue"));
  std::vector<SlurmJob> jobs;
  for (const json& j : doc["jobs"]) {
    if (!j.is_object()) return Status::Invalid("squeue output: a job is not an object");
    SlurmJob job{Str(j, "job_id"), Str(j, "name"),    Str(j, "job_state"),
                 Str(j, "nodes"),  Str(j, "comment"), Str(j, "state_reason")};
    if (job.id.empty()) return Status::Invalid("squeue output: a job has no job_id");
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Result<std::vector<SlurmJob>> ParseSqueueText(std::string_view text) {
  std::vector<SlurmJob> jobs;
  for (std::string_view line : Lines(text)) {
    auto f = SplitFields(line, 5);
    if (!f || (*f)[0].empty()) {
      return Status::Invalid("squeue output: unexpected line '" + std::string(line) + "'");
    }
    jobs.push_back(
        SlurmJob{(*f)[0], (*f)[3], (*f)[1], NullToEmpty((*f)[2]), NullToEmpty((*f)[4]), ""});
  }
  return jobs;
}

Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text) {
  ASSIGN_OR_RETURN(json doc, ParseDocument(text, "nodes", "sinfo"));
  std::vector<SlurmNode> nodes;
  for (const json& n : doc["nodes"]) {
    if (!n.is_object()) return Status::Invalid("sinfo output: a node is not an object");
    SlurmNode node{Str(n, "name"), Str(n, "address"), Lower(Str(n, "state")), false, {}, 0, ""};
    if (node.name.empty()) return Status::Invalid("sinfo output: a node has no name");
    ASSIGN_OR_RETURN(node.gpus, NodeGpus(node.name, Str(n, "gres")));
    // The base state as the text format's: only these take jobs ("down", "future", "unknown"
    // do not, flag or none).
    if (!node.state.empty() && node.state != "idle" && node.state != "allocated" &&
        node.state != "mixed") {
      node.unavailable = true;
    }
    if (auto f = n.find("state_flags"); f != n.end() && f->is_array()) {
      for (const json& flag : *f) {
        if (flag.is_string() && FlagBlocksJobs(flag.get<std::string>())) {
          node.unavailable = true;
          node.flags += "+" + Lower(flag.get<std::string>());
        }
      }
    }
    if (auto p = n.find("partitions"); p != n.end() && p->is_array()) {
      for (const json& part : *p) {
        if (part.is_string()) node.partitions.push_back(part.get<std::string>());
      }
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Result<std::vector<SlurmNode>> ParseSinfoText(std::string_view text) {
  std::vector<SlurmNode> nodes;
  for (std::string_view line : Lines(text)) {
    const size_t bars = static_cast<size_t>(std::count(line.begin(), line.end(), '|'));
    auto f = SplitFields(line, bars == 4 ? 5 : 4);
    if (!f || (*f)[0].empty() || f->at(3).find('|') != std::string::npos) {
      return Status::Invalid("sinfo output: unexpected line '" + std::string(line) + "'");
    }
    int gpus = 0;
    if (f->size() == 5) {
      ASSIGN_OR_RETURN(gpus, NodeGpus((*f)[0], (*f)[4]));
    }
    std::string state = Lower((*f)[2]);
    // A trailing *~#!%$@^- marks a node that is not responding, powered down, reserved...
    std::string suffix;
    while (!state.empty() &&
           std::string_view("*~#!%$@^-+").find(state.back()) != std::string_view::npos) {
      suffix.insert(suffix.begin(), state.back());
      state.pop_back();
    }
    const bool flagged = !suffix.empty();
    const bool usable = state == "idle" || state == "allocated" || state == "mixed";
    std::string part = (*f)[3];
    if (!part.empty() && part.back() == '*') part.pop_back();
    nodes.push_back(
        SlurmNode{(*f)[0], NullToEmpty((*f)[1]), state, flagged || !usable, {part}, gpus, suffix});
  }
  return nodes;
}

std::optional<int> GresGpus(std::string_view gres) {
  int64_t total = 0;
  while (!gres.empty()) {
    // Entries are split at commas outside parentheses: "gpu:2(S:0,1)" is one entry.
    size_t end = 0;
    for (int depth = 0; end < gres.size() && (depth > 0 || gres[end] != ','); ++end) {
      depth += gres[end] == '(' ? 1 : (gres[end] == ')' ? -1 : 0);
    }
    std::string_view entry = gres.substr(0, end);
    gres.remove_prefix(std::min(gres.size(), end + 1));
    entry = entry.substr(0, entry.find('('));
    const size_t colon = entry.find(':');
    if (entry.substr(0, colon) != "gpu") continue;
    // gpu, gpu:4, gpu:a100, gpu:a100:4: the count is the last field when it is a number.
    const std::string_view last =
        colon == std::string_view::npos ? std::string_view() : entry.substr(entry.rfind(':') + 1);
    int64_t count = 1;
    if (!last.empty() && std::isdigit(static_cast<unsigned char>(last[0]))) {
      if (last.size() > 6 || !std::all_of(last.begin(), last.end(),
                                          [](unsigned char c) { return std::isdigit(c) != 0; })) {
        return std::nullopt;
      }
      count = std::stoll(std::string(last));
    } else if (std::count(entry.begin(), entry.end(), ':') > 1) {
      return std::nullopt;  // gpu:type:junk
    }
    total += count;
    if (total > 1'000'000) return std::nullopt;
  }
  return static_cast<int>(total);
}

bool JobIsActive(const SlurmJob& job) {
  // COMPLETING: the job ended but Slurm has not finished with it (its processes may still be
  // exiting, its epilog running); its final state (COMPLETED, FAILED...) comes next. Gone
  // before that, a job that finished was resubmitted before its COMPLETED was seen.
  return job.state == "PENDING" || job.state == "CONFIGURING" || job.state == "RUNNING" ||
         job.state == "REQUEUED" || job.state == "RESIZING" || job.state == "COMPLETING";
}

bool JobIsRunning(const SlurmJob& job) { return job.state == "RUNNING"; }

std::string JobTag(const std::string& workload, int replica) {
  return "aiscale:" + workload + ":" + std::to_string(replica);
}

std::optional<int> ParseJobTag(const std::string& comment, const std::string& workload) {
  const std::string prefix = "aiscale:" + workload + ":";
  if (comment.size() <= prefix.size() || comment.compare(0, prefix.size(), prefix) != 0) {
    return std::nullopt;
  }
  const std::string digits = comment.substr(prefix.size());
  if (digits.size() > 6 || !std::all_of(digits.begin(), digits.end(),
                                        [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return std::nullopt;
  }
  return std::stoi(digits);
}

int CountIdleNodes(const std::vector<SlurmNode>& nodes, const std::string& partition) {
  std::set<std::string> seen;  // a node in several partitions is listed once per partition
  for (const SlurmNode& n : nodes) {
    if (n.state != "idle" || n.unavailable) continue;
    if (!partition.empty() &&
        std::find(n.partitions.begin(), n.partitions.end(), partition) == n.partitions.end()) {
      continue;
    }
    seen.insert(n.name);
  }
  return static_cast<int>(seen.size());
}

}  // namespace aiscale::act
