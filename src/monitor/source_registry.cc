#include "monitor/source_registry.h"

namespace aiscale::monitor {

Result<SourceRegistry> DefaultSourceRegistry() {
  // One line per source type. Keep alphabetical.
  return SourceRegistry::FromEntries("type", {});
}

}  // namespace aiscale::monitor
