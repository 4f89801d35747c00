#include "sim/traces/line_trace_stream.h"

#include "sim/traces/csv_fields.h"

namespace aiscale::sim::traces {

LineTraceStream::LineTraceStream(std::string path, Format format, bool has_header,
                                 std::string time_field)
    : path_(std::move(path)),
      format_(format),
      has_header_(has_header),
      time_field_(std::move(time_field)) {}

bool LineTraceStream::NextRecord(std::string& where, Status& status) {
  if (format_ == Format::kCsv) return NextCsvRecord(reader_, line_, where, status);
  do {
    if (!reader_.Next(line_)) {
      status = reader_.status();
      return false;
    }
  } while (line_.empty());  // a blank line (a trailing one, say) is not a row
  where = reader_.Where();
  return true;
}

Status LineTraceStream::Begin() {
  started_ = true;
  RETURN_IF_ERROR(reader_.Open(path_));
  if (!has_header_) return Status::Ok();
  std::string where;
  Status s;
  if (!NextRecord(where, s)) {
    RETURN_IF_ERROR(s);
    return Status::Error(path_ + ":1: empty file (no header line)");
  }
  return ParseHeader(line_, where);
}

Status LineTraceStream::Next(std::vector<TraceRequest>& out, size_t max) {
  if (failed_) return Status::Error(path_ + ": stream stopped after an earlier error");
  if (done_) return Status::Ok();
  auto fail = [this](Status s) {
    failed_ = true;
    return s;
  };
  if (!started_) {
    Status s = Begin();
    if (!s.ok()) return fail(s);
  }
  size_t added = 0;
  while (added < max) {
    std::string where;
    Status read;
    if (!NextRecord(where, read)) {
      if (!read.ok()) return fail(read);
      if (rows_ == 0) {
        return fail(Status::Error(reader_.Where() + ": empty trace (no request rows)"));
      }
      done_ = true;
      break;
    }
    TraceRequest req;
    Status s = ParseRow(line_, where, req);
    if (!s.ok()) return fail(s);
    if (rows_ == 0) {
      origin_ns_ = req.arrival_ns;
      previous_ns_ = req.arrival_ns;
    }
    s = CheckMonotonic(req.arrival_ns, previous_ns_, time_field_, where);
    if (!s.ok()) return fail(s);
    previous_ns_ = req.arrival_ns;
    // Times are int64 ns: a trace spanning more than ~292 years cannot be represented (found
    // by tests/fuzz/alibaba_trace_fuzz: years 1728 to 2024).
    if (__builtin_sub_overflow(req.arrival_ns, origin_ns_, &req.arrival_ns)) {
      return fail(Status::Error(where + ": field " + time_field_ +
                                ": too far from the first request (more than 292 years)"));
    }
    out.push_back(req);
    ++rows_;
    ++added;
  }
  return Status::Ok();
}

}  // namespace aiscale::sim::traces
