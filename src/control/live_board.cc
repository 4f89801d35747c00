#include "control/live_board.h"

#include <unordered_map>

namespace aiscale::control {

void AppendScalePoint(std::vector<ScalePoint>& h, const ScalePoint& p, size_t limit) {
  // The last two points equal to `p`: the newer one is only "still so at this time".
  if (h.size() >= 2 && h[h.size() - 1].desired == p.desired && h[h.size() - 1].ready == p.ready &&
      h[h.size() - 2].desired == p.desired && h[h.size() - 2].ready == p.ready) {
    h.back().wall_s = p.wall_s;
    return;
  }
  h.push_back(p);
  if (h.size() > limit) h.erase(h.begin(), h.begin() + static_cast<long>(h.size() - limit));
}

void LiveBoard::Publish(std::vector<WorkloadView> views) {
  std::lock_guard<std::mutex> lock(mu_);
  // Views come in the same order tick after tick; a map only when they do not.
  std::unordered_map<std::string, WorkloadView*> by_key;
  for (size_t i = 0; i < views.size(); ++i) {
    WorkloadView& v = views[i];
    WorkloadView* old = nullptr;
    if (i < views_.size() && views_[i].ref.namespace_ == v.ref.namespace_ &&
        views_[i].ref.name == v.ref.name) {
      old = &views_[i];
    } else {
      if (by_key.empty()) {
        for (WorkloadView& o : views_) by_key[o.ref.Key()] = &o;
      }
      if (auto it = by_key.find(v.ref.Key()); it != by_key.end()) old = it->second;
    }
    v.history.clear();
    const double wall_s = v.last ? ToSeconds(v.last->wall.time_since_epoch()) : 0;
    v.rule_since_s = wall_s;
    if (old) {
      v.history = std::move(old->history);
      const bool same_rule =
          old->last && v.last && old->last->recommendation.rule == v.last->recommendation.rule;
      if (same_rule) v.rule_since_s = old->rule_since_s;
    }
    AppendScalePoint(v.history, {wall_s, v.desired, v.ready}, kHistoryPoints);
  }
  views_ = std::move(views);
  ready_ = true;
}

std::vector<WorkloadView> LiveBoard::Workloads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return views_;
}

std::optional<WorkloadView> LiveBoard::Workload(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const WorkloadView& v : views_) {
    if (v.ref.Key() == key || v.ref.name == key) return v;
  }
  return std::nullopt;
}

void LiveBoard::PublishPool(PoolView pool) {
  std::lock_guard<std::mutex> lock(mu_);
  pool_ = std::move(pool);
}

std::optional<PoolView> LiveBoard::Pool() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pool_;
}

bool LiveBoard::Ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_;
}

}  // namespace aiscale::control
