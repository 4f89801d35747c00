#include "sim/traces/helios_trace.h"

#include <optional>
#include <vector>

#include "sim/traces/csv_fields.h"
#include "sim/traces/line_reader.h"

namespace aiscale::sim::traces {
namespace {

// Opens `path` and reads its header record; `where` gets its FILE:LINE.
Status OpenWithHeader(LineReader& r, const std::string& path, std::string& header,
                      std::string& where) {
  RETURN_IF_ERROR(r.Open(path));
  Status read;
  if (!NextCsvRecord(r, header, where, read)) {
    RETURN_IF_ERROR(read);
    return Status::Error(path + ":1: empty file (no header line)");
  }
  return Status::Ok();
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  const size_t first = s.find_first_not_of(" \t");
  return first == std::string::npos ? "" : s.substr(first);
}

// The demand of one sequence row: running + pending GPUs.
Result<int64_t> RowDemand(const std::vector<std::string>& f, const std::vector<size_t>& cols,
                          const std::string& where) {
  ASSIGN_OR_RETURN(const uint32_t running, ParseCount(f[cols[1]], "running_gpu_num", where));
  ASSIGN_OR_RETURN(const uint32_t pending, ParseCount(f[cols[2]], "pending_gpu_num", where));
  const int64_t gpus = int64_t{running} + int64_t{pending};
  if (gpus > kMaxDemandGpus) {
    return FieldError(where, "pending_gpu_num",
                      "running + pending = " + std::to_string(gpus) + " GPUs; at most " +
                          std::to_string(kMaxDemandGpus) + " (docs/limits.md)");
  }
  return gpus;
}

}  // namespace

Result<DemandSeries> LoadHeliosVcSequence(const std::string& path) {
  LineReader r;
  std::string record, where;
  RETURN_IF_ERROR(OpenWithHeader(r, path, record, where));
  static const std::vector<std::string> kColumns = {"time", "running_gpu_num", "pending_gpu_num"};
  ASSIGN_OR_RETURN(const auto cols, FindColumns(record, kColumns, where));
  DemandSeries s;
  std::vector<std::string> f;
  int64_t first_ns = 0, prev_ns = 0;
  Status read;
  while (NextCsvRecord(r, record, where, read)) {
    RETURN_IF_ERROR(SplitCsv(record, f, where));
    for (size_t k = 0; k < cols.size(); ++k) {
      if (cols[k] >= f.size()) return FieldError(where, kColumns[k], "missing value");
    }
    ASSIGN_OR_RETURN(const int64_t t, ParseDateTimeNs(f[cols[0]], "time", where));
    if (!s.points.empty() && t <= prev_ns) {
      RETURN_IF_ERROR(CheckMonotonic(t, prev_ns, "time", where));
      return FieldError(where, "time", "repeats the previous row's time (one row per minute)");
    }
    if (s.points.empty()) first_ns = t;
    if (s.points.size() == kMaxDemandPoints) {
      return Status::Error(where + ": more than " + std::to_string(kMaxDemandPoints) +
                           " rows (docs/limits.md)");
    }
    ASSIGN_OR_RETURN(const int64_t gpus, RowDemand(f, cols, where));
    s.points.push_back({static_cast<double>(t - first_ns) / 1e9, gpus});
    prev_ns = t;
  }
  RETURN_IF_ERROR(read);
  if (s.points.size() < 2) {
    return Status::Error(path +
                         ": needs at least two rows (the last row lasts as long as the "
                         "one before it)");
  }
  const double last = s.points.back().t_s;
  s.end_s = last + (last - s.points[s.points.size() - 2].t_s);
  return s;
}

Result<std::map<std::string, int64_t>> LoadHeliosQuotas(const std::string& path,
                                                        std::string_view date) {
  ASSIGN_OR_RETURN(const int64_t wanted,
                   ParseDateTimeNs(std::string(date) + " 00:00:00", "date", "quota date"));
  LineReader r;
  std::string record, where;
  RETURN_IF_ERROR(OpenWithHeader(r, path, record, where));
  ASSIGN_OR_RETURN(const auto cols, FindColumns(record, {"date", "total"}, where));
  std::vector<std::string> names;
  RETURN_IF_ERROR(SplitCsv(record, names, where));
  for (std::string& n : names) n = Trimmed(n);
  std::map<std::string, int64_t> out;
  std::vector<std::string> f;
  std::optional<int64_t> prev;
  bool found = false;
  Status read;
  while (NextCsvRecord(r, record, where, read)) {
    RETURN_IF_ERROR(SplitCsv(record, f, where));
    if (f.size() != names.size()) {
      return Status::Error(where + ": " + std::to_string(f.size()) + " columns; the header has " +
                           std::to_string(names.size()));
    }
    ASSIGN_OR_RETURN(const int64_t day, ParseDateTimeNs(f[cols[0]] + " 00:00:00", "date", where));
    if (prev && day <= *prev) {
      return FieldError(where, "date", "dates must increase (one row per day)");
    }
    prev = day;
    int64_t sum = 0;
    std::map<std::string, int64_t> row;
    for (size_t i = 0; i < f.size(); ++i) {
      if (i == cols[0] || i == cols[1]) continue;
      ASSIGN_OR_RETURN(const uint32_t gpus, ParseCount(f[i], names[i], where));
      row[names[i]] = gpus;
      sum += gpus;
    }
    ASSIGN_OR_RETURN(const uint32_t total, ParseCount(f[cols[1]], "total", where));
    if (total != sum) {
      return FieldError(
          where, "total",
          std::to_string(total) + ", but the clusters' quotas add up to " + std::to_string(sum));
    }
    if (day == wanted) {
      out = std::move(row);
      found = true;
    }
  }
  RETURN_IF_ERROR(read);
  if (!found) return Status::Error(path + ": no row for date " + std::string(date));
  return out;
}

}  // namespace aiscale::sim::traces
