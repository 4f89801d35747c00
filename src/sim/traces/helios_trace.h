// Helios (SenseTime, Hu et al. SC '21; ../shared/traces/helios_earth_vc_sequence): a virtual
// cluster's per-minute sequence read as its GPU demand, and the clusters' daily GPU quotas.
//
// Sequence (<vc>_cluster_sequence_vc.csv[.gz]): one row per minute, columns found by name:
// `time` (YYYY-MM-DD HH:MM:SS), `running_gpu_num` and `pending_gpu_num`; demand = running +
// pending, the GPUs the cluster's jobs asked for. Rows in strictly increasing time; the last
// row holds for as long as the one before it did. Quotas (Earth_gpu_number.csv): `date`
// (YYYY-MM-DD), one column per virtual cluster (GPUs), and `total`, which must equal their sum.
// Every row of either file is checked; a bad one is an error naming FILE:LINE: field NAME.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/result.h"
#include "sim/traces/demand_series.h"

namespace aiscale::sim::traces {

Result<DemandSeries> LoadHeliosVcSequence(const std::string& path);

// Virtual cluster name -> its GPU quota on `date` (YYYY-MM-DD); the `total` column is checked,
// not returned. Fails when no row has that date.
Result<std::map<std::string, int64_t>> LoadHeliosQuotas(const std::string& path,
                                                        std::string_view date);

}  // namespace aiscale::sim::traces
