// GuaranteeWaits: how long a tenant waited for GPUs within its guarantee. An episode opens when
// the tenant's demand within its guarantee exceeds what it holds, and closes when it holds
// that much again (granted) -- or no longer needs it; the GPUs then work once their restart is
// over (ready). An episode is `lent` when, as it opened, the pool had fewer idle GPUs than the
// shortfall: others held the tenant's guarantee, so getting it meant taking GPUs back.
//
// Why: issue 23's target "an owner gets its guarantee back within one control period plus the
// lender's restart time" is measured on these. Plain data; times in seconds of the run.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace aiscale::sim::demand {

class GuaranteeWaits {
 public:
  bool open() const { return open_at_.has_value(); }
  // No effect when an episode is open already.
  void Open(double t_s, bool lent);
  // Closes the open episode (no effect when none): granted at grant_s, working at ready_s.
  void Close(double grant_s, double ready_s);

  // {episodes, lent_episodes, unfinished, all: {to_grant_s, to_ready_s}, lent: {...}}, each
  // wait as {max, p50, p99}; an episode still open at end_s counts as waiting until then.
  nlohmann::json Summary(double end_s) const;

 private:
  struct Episode {
    double to_grant = 0;
    double to_ready = 0;
    bool lent = false;
  };
  std::vector<Episode> done_;
  std::optional<double> open_at_;
  bool open_lent_ = false;
};

}  // namespace aiscale::sim::demand
