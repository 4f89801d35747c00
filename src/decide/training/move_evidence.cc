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

}  // namespace

MoveEvidence JudgeMove(const ThroughputModel& model, int from, int to, bool per_node) {
  MoveEvidence m;
  m.from = model.Evidence(from);
  m.to = model.Evidence(to);
  m.per_node = per_node;
  if (m.from.count <= 0 || m.to.count <= 0) return m;
  m.judged = true;
  const double nf = per_node ? from : 1, nt = per_node ? to : 1;
  m.diff = m.to.mean / nt - m.from.mean / nf;
  m.se = std::hypot(m.to.se / nt, m.from.se / nf);
  if (m.se > 0) {
    m.z = m.diff / m.se;
  } else {
    m.z = m.diff > 0 ? kHugeZ : (m.diff < 0 ? -kHugeZ : 0);
  }
  return m;
}

std::string MoveEvidence::Text() const {
  if (to.count <= 0) {
    return std::to_string(to.nodes) + " never measured: the model's prior decides";
  }
  if (from.count <= 0) {
    return std::to_string(from.nodes) + " not measured yet: nothing to weigh " +
           std::to_string(to.nodes) + " against";
  }
  std::string s = "measured ";
  s.append(SizeText(to, per_node)).append(" vs ").append(SizeText(from, per_node));
  s.append(": z = ").append(std::abs(z) >= kHugeZ ? (z > 0 ? "+inf" : "-inf") : Fmt("%.2g", z));
  return s;
}

}  // namespace aiscale::decide
