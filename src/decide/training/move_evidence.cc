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

}  // namespace

MoveEvidence JudgeMove(const ThroughputModel& model, int from, int to, bool per_node) {
  MoveEvidence m;
  m.from = model.Evidence(from);
  m.to = model.Evidence(to);
  m.per_node = per_node;
  const auto drift = model.DriftAt(from);
  if (drift && std::abs(drift->z) >= kDriftZ &&
      std::abs(drift->stint.mean - drift->earlier.mean) >= kMinDrift * drift->earlier.mean) {
    m.drifted = true;
    m.from = drift->earlier;
    m.from_now = drift->stint;
    m.drift_z = drift->z;
  }
  if (m.from.count <= 0 || m.to.count <= 0) return m;
  m.judged = true;
  const double nf = per_node ? from : 1, nt = per_node ? to : 1;
  m.diff = m.to.mean / nt - m.from.mean / nf;
  m.se = std::hypot(m.to.se / nt, m.from.se / nf);
  m.z = ZScore(m.diff, m.se);
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
