#include "decide/pause.h"

#include <algorithm>
#include <cctype>

namespace aiscale::decide {
namespace {

Status BadValue(const std::string& name, const std::string& value, const std::string& want) {
  const std::string shown = value.size() > 40 ? value.substr(0, 40) + "..." : value;
  return Status::Invalid("annotation " + name + ": must be " + want + ", got '" + shown + "'");
}

Result<bool> Flag(const std::string& name,
                  const std::function<std::optional<std::string>(const std::string&)>& get) {
  const std::optional<std::string> v = get(name);
  if (!v) return false;
  if (*v == "true") return true;
  if (*v == "false") return false;
  return BadValue(name, *v, "\"true\" or \"false\"");
}

}  // namespace

std::string PauseSpec::Summary() const {
  if (pinned) return "pinned at " + std::to_string(*pinned);
  if (paused) return "paused";
  if (no_scale_down && no_scale_up) return "scale-down and scale-up paused";
  if (no_scale_down) return "scale-down paused";
  if (no_scale_up) return "scale-up paused";
  return "";
}

Result<PauseSpec> ParsePauseAnnotations(
    const std::function<std::optional<std::string>(const std::string&)>& get) {
  PauseSpec p;
  ASSIGN_OR_RETURN(p.paused, Flag(kPausedAnnotation, get));
  ASSIGN_OR_RETURN(p.no_scale_down, Flag(kPausedScaleDownAnnotation, get));
  ASSIGN_OR_RETURN(p.no_scale_up, Flag(kPausedScaleUpAnnotation, get));
  if (const std::optional<std::string> v = get(kPausedReplicasAnnotation)) {
    const bool digits =
        !v->empty() && v->size() <= 7 &&
        std::all_of(v->begin(), v->end(), [](unsigned char c) { return std::isdigit(c); });
    if (!digits || std::stol(*v) > 1000000) {
      return BadValue(kPausedReplicasAnnotation, *v, "a whole number of replicas (0 to 1000000)");
    }
    p.pinned = static_cast<int>(std::stol(*v));
  }
  if (p.pinned) {
    p.source = std::string("annotation ") + kPausedReplicasAnnotation;
  } else if (p.paused) {
    p.source = std::string("annotation ") + kPausedAnnotation;
  } else if (p.no_scale_down || p.no_scale_up) {
    p.source = std::string("annotation ") +
               (p.no_scale_down ? kPausedScaleDownAnnotation : kPausedScaleUpAnnotation);
  }
  return p;
}

ConstrainResult PausedConstraints::Constrain(int desired, int current,
                                             std::optional<int> max_available) const {
  ConstrainResult r =
      inner_ ? inner_->Constrain(desired, current, max_available) : ConstrainResult{desired, ""};
  const int would = r.desired;
  std::string why;
  if (pause_.pinned) {
    r.desired = *pause_.pinned;
    why = "pinned at " + std::to_string(*pause_.pinned) + " replicas by " + pause_.source;
  } else if (pause_.paused) {
    r.desired = current;
    why = "paused by " + pause_.source;
  } else if (pause_.no_scale_down && r.desired < current) {
    r.desired = current;
    why = std::string("scale-down paused by annotation ") + kPausedScaleDownAnnotation;
  } else if (pause_.no_scale_up && r.desired > current) {
    r.desired = current;
    why = std::string("scale-up paused by annotation ") + kPausedScaleUpAnnotation;
  }
  if (why.empty()) return r;
  if (would != r.desired) why += " (would be " + std::to_string(would) + ")";
  r.reason += (r.reason.empty() ? "" : "; ") + why;
  return r;
}

}  // namespace aiscale::decide
