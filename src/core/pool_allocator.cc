#include "core/pool_allocator.h"

namespace aiscale {

std::string_view GrantReasonName(GrantReason r) {
  switch (r) {
    case GrantReason::kAsWanted:
      return "as_wanted";
    case GrantReason::kGuarantee:
      return "guarantee";
    case GrantReason::kBorrowed:
      return "borrowed";
    case GrantReason::kReclaimed:
      return "reclaimed";
    case GrantReason::kShrunk:
      return "shrunk";
    case GrantReason::kSuspended:
      return "suspended";
    case GrantReason::kPoolFull:
      return "pool_full";
    case GrantReason::kBorrowLimit:
      return "borrow_limit";
    case GrantReason::kRegrowHeld:
      return "regrow_held";
    case GrantReason::kPoolUnknown:
      return "pool_unknown";
  }
  return "unknown";
}

}  // namespace aiscale
