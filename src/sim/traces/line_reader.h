// LineReader: reads a text file line by line, gzip-compressed or plain (zlib detects which),
// counting lines so that parse errors can name them.
//
// Why: the shared traces are mostly .csv.gz / .jsonl.gz and are streamed, not loaded whole.
// Lines may be any length; a trailing '\r' is stripped. Not thread-safe.
#pragma once

#include <string>

#include <zlib.h>

#include "core/result.h"

namespace aiscale::sim::traces {

class LineReader {
 public:
  LineReader() = default;
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Fails with "unable to open trace FILE: cause" when the file cannot be read.
  Status Open(const std::string& path);
  // Reads the next line into `line` (without the newline). Returns false at end of file; a
  // read error is reported through status().
  bool Next(std::string& line);
  const Status& status() const { return status_; }
  long line_number() const { return line_number_; }
  const std::string& path() const { return path_; }
  // "FILE:LINE" of the line last returned.
  std::string Where() const;

 private:
  gzFile file_ = nullptr;
  std::string path_;
  long line_number_ = 0;
  Status status_;
  char buf_[1 << 16];
};

}  // namespace aiscale::sim::traces
