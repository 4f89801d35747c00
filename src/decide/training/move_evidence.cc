#include "decide/training/move_evidence.h"

#include <cmath>
#include <cstdio>

namespace aiscale::decide {
namespace {

std::string Fmt(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// "939±12 samples/s (40 readings) at 2"
std::string SizeText(const SizeEvidence& e, bool per_node) {
  const double n = per_node ? e.nodes : 1;
  std::string s = Fmt("%.4g", e.mean / n);
  s.append("±").append(Fmt("%.2g", e.se / n));
  s.append(per_node ? " samples/s per node (" : " samples/s (");
  s.append(Fmt("%.0f", e.count)).append(e.count == 1 ? " reading) at " : " readings) at ");
  s.append(std::to_string(e.nodes));
  return s;
}

// A change of speed smaller than this share is not called a drift, whatever its z: readings
// without noise (the simulator) differ by rounding only.
constexpr double kMinDrift = 0.02;

std::string ZText(double z) {
  return std::abs(z) >= kHugeZ ? (z > 0 ? "+inf" : "-inf") : Fmt("%.2g", z);
}

// z of `to` over `from` (per node or for the job), filled into m.
void Judge(MoveEvidence& m) {
  if (m.from.count <= 0 || m.to.count <= 0) return;
  m.judged = true;
  const double nf = m.per_node ? m.from.nodes : 1, nt = m.per_node ? m.to.nodes : 1;
  m.diff = m.to.mean / nt - m.from.mean / nf;
  m.se = std::hypot(m.to.se / nt, m.from.se / nf);
  m.z = ZScore(m.diff, m.se);
}

}  // namespace

MoveEvidence JudgeMove(const ThroughputModel& model, int from, int to, bool per_node) {
  MoveEvidence m;
  m.from = model.Evidence(from);
  m.to = model.Evidence(to);
  m.per_node = per_node;
  Judge(m);
  const auto drift = model.DriftAt(from);
  if (!drift) return m;
  MoveEvidence era = m;
  era.from = drift->earlier;
  era.from_now = drift->stint;
  era.drift_z = drift->z;
  era.whole_z = m.z;
  era.judged = false;
  Judge(era);
  era.drifted =
      std::abs(drift->z) >= kDriftZ &&
      std::abs(drift->stint.mean - drift->earlier.mean) >= kMinDrift * drift->earlier.mean;
  // The weaker of the two comparisons decides, unless the stint drifted beyond its noise: then
  // only the earlier readings are of the other size's time.
  if (era.drifted) return era;
  if (m.judged && era.judged && era.z < m.z) {
    era.era = true;
    return era;
  }
  return m;
}

std::string MoveEvidence::Text() const {
  std::string drift;
  if (drifted) {
    // "2 changed speed since its earlier readings (724±9 -> 520±6 samples/s, z = -17): 3 is
    // weighed against those, of its own time; "
    drift = std::to_string(from.nodes) + " changed speed since its earlier readings (" +
            Fmt("%.4g", from.mean) + "±" + Fmt("%.2g", from.se) + " -> " +
            Fmt("%.4g", from_now.mean) + "±" + Fmt("%.2g", from_now.se) +
            " samples/s, z = " + ZText(drift_z) + "): " + std::to_string(to.nodes) +
            " is weighed against those, of its own time; ";
  } else if (era) {
    // "2's readings before this stint back the move less than all of 2's (z = 3.7): "
    drift = std::to_string(from.nodes) + "'s readings before this stint (of " +
            std::to_string(to.nodes) + "'s time) back the move less than all of " +
            std::to_string(from.nodes) + "'s (z = " + ZText(whole_z) + "): ";
  }
  return drift + JudgedText();
}

std::string MoveEvidence::JudgedText() const {
  if (to.count <= 0) {
    return std::to_string(to.nodes) + " never measured: the model's prior decides";
  }
  if (from.count <= 0) {
    return std::to_string(from.nodes) + " not measured yet: nothing to weigh " +
           std::to_string(to.nodes) + " against";
  }
  std::string s = "measured ";
  s.append(SizeText(to, per_node)).append(" vs ").append(SizeText(from, per_node));
  s.append(": z = ").append(ZText(z));
  return s;
}

}  // namespace aiscale::decide
