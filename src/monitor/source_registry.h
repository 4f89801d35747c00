// The explicit list of metric source types a controller config's `sources:` may use
// (docs/architecture.md "Seams": MetricSource implementations). Adding a source: its files in
// monitor/, one line in source_registry.cc, and docs/adding-a-source.md.
#pragma once

#include "core/config/spec_registry.h"
#include "core/spec.h"

namespace aiscale::monitor {

using SourceRegistry = config::SpecRegistry<SourceSpec>;
Result<SourceRegistry> DefaultSourceRegistry();

}  // namespace aiscale::monitor
