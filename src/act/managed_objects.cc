#include "act/managed_objects.h"

#include <algorithm>
#include <tuple>

namespace aiscale::act {
namespace {

auto Tie(const EngineObject& o) { return std::tie(o.namespace_, o.kind, o.name); }

}  // namespace

ManagedObjects::ManagedObjects(std::vector<EngineObject> fixed, bool awaits_watch)
    : fixed_(std::move(fixed)), waiting_(awaits_watch) {}

void ManagedObjects::SetWatched(std::vector<EngineObject> watched) {
  std::sort(watched.begin(), watched.end(),
            [](const EngineObject& a, const EngineObject& b) { return Tie(a) < Tie(b); });
  std::lock_guard<std::mutex> lock(mu_);
  const bool same =
      !waiting_ && std::equal(watched.begin(), watched.end(), watched_.begin(), watched_.end(),
                              [](const auto& a, const auto& b) { return Tie(a) == Tie(b); });
  if (same) return;
  waiting_ = false;
  watched_ = std::move(watched);
  ++version_;
}

Result<ManagedObjects::View> ManagedObjects::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (waiting_) {
    return Status::Unavailable(
        "the AIScalers are not listed yet (until they are, their pods would count as others')");
  }
  View v;
  v.objects = fixed_;
  v.objects.insert(v.objects.end(), watched_.begin(), watched_.end());
  v.version = version_.load();
  return v;
}

}  // namespace aiscale::act
