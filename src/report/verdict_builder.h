// VerdictBuilder: collects a Verdict's targets one by one, with the text that says how each
// required target was missed; Done() decides met_all and joins those texts into why_not.
#pragma once

#include <string>
#include <utility>

#include "report/verdict.h"

namespace aiscale::report {

class VerdictBuilder {
 public:
  // `miss`: how the target was missed, for why_not (used only when it was, and is required).
  void Add(TargetResult r, const std::string& miss) {
    if (!r.met && r.Required()) why_ += (why_.empty() ? "" : "; ") + miss;
    v_.targets.push_back(std::move(r));
  }
  bool empty() const { return v_.targets.empty(); }
  Verdict Done() && {
    for (const TargetResult& t : v_.targets) v_.met_all = v_.met_all && (t.met || !t.Required());
    if (!v_.met_all) v_.why_not = why_;
    return std::move(v_);
  }

 private:
  Verdict v_;
  std::string why_;
};

}  // namespace aiscale::report
