#include "control/store_health.h"

namespace aiscale::control {

std::string StoreHealth::Record(const Status& write) {
  if (!write.ok()) {
    ++failed_batches_;
    if (failing_) return "";
    failing_ = true;
    return "unable to write the store: " + write.message() +
           " (decisions are applied and served but not persisted until writing resumes; "
           "aiscale_store_write_errors_total counts the failed ticks)";
  }
  if (!failing_) return "";
  failing_ = false;
  std::string line = "store writing resumed after " + std::to_string(failed_batches_) +
                     " failed tick(s); the decisions of those ticks were not stored";
  failed_batches_ = 0;
  return line;
}

}  // namespace aiscale::control
