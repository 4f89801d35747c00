// LineTraceStream: the shared skeleton of every line-oriented trace loader (CSV, JSONL).
//
// Why: header handling, empty-file and no-rows errors, time normalisation (first request at
// t = 0) and the backwards-time check are the same for every format, so each format only says
// how to read its header and one row. Errors are "FILE:LINE: field NAME: what". A CSV record
// may span lines (a quoted field holding a newline, RFC 4180); it is passed whole, and named
// by its first line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/traces/line_reader.h"
#include "sim/traces/trace_request.h"

namespace aiscale::sim::traces {

class LineTraceStream : public RequestStream {
 public:
  enum class Format { kCsv, kJsonLines };
  // `has_header`: the first record is a header passed to ParseHeader.
  LineTraceStream(std::string path, Format format, bool has_header, std::string time_field);
  Status Next(std::vector<TraceRequest>& out, size_t max) final;

 protected:
  virtual Status ParseHeader(std::string_view line, const std::string& where) = 0;
  // Fills `req` with absolute arrival time (any epoch, ns) and token counts.
  virtual Status ParseRow(std::string_view line, const std::string& where, TraceRequest& req) = 0;

 private:
  Status Begin();
  // The next non-empty record; false at the end or on an error (then in `status`).
  bool NextRecord(std::string& where, Status& status);
  std::string path_;
  Format format_;
  bool has_header_;
  std::string time_field_;
  LineReader reader_;
  bool started_ = false;
  bool failed_ = false;
  bool done_ = false;
  long rows_ = 0;
  int64_t origin_ns_ = 0;
  int64_t previous_ns_ = 0;
  std::string line_;
};

}  // namespace aiscale::sim::traces
