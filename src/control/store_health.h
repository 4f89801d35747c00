// StoreHealth: whether the Store is taking the Controller's writes, and when that changes.
//
// Why: a full disk (or a read-only remount, a lost volume) showed only in the API's last
// Decision ("unable to persist decision"). The Controller records every batch's outcome here:
// the first failure and the first success after failures are events, logged once each (not
// every tick), with how many batches were lost between. Not thread-safe: the tick's thread.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace aiscale::control {

class StoreHealth {
 public:
  // The line to log when writing starts failing or resumes; empty otherwise.
  std::string Record(const Status& write);
  bool failing() const { return failing_; }

 private:
  bool failing_ = false;
  int64_t failed_batches_ = 0;  // since writing last failed
};

}  // namespace aiscale::control
