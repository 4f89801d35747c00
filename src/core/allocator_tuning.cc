#include "core/allocator_tuning.h"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace aiscale {

bool TuneAllocator() {
#if defined(__GLIBC__) && defined(M_MXFAST)
  return mallopt(M_MXFAST, 0) == 1;
#else
  return false;
#endif
}

}  // namespace aiscale
