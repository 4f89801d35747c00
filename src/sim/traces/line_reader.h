// LineReader: reads a text file line by line, gzip-compressed or plain (the first two bytes
// decide), counting lines so that parse errors can name them.
//
// Why: the shared traces are mostly .csv.gz / .jsonl.gz and are streamed, not loaded whole.
// Every input is bounded (issue 11): the file must be a regular file within its FileLimit
// (core/bounded_file.h: never a FIFO or /dev/zero), the decompressed data within
// limit.max_decoded (a gzip bomb stops there), and one line within kMaxLineBytes. A file may
// hold several gzip members one after another (as `cat a.gz b.gz` makes; gzip reads them as
// one stream). Anything after the last member that is not another gzip member -- plain rows
// appended to a .gz file, say -- is an error, never silently dropped (zlib's gzread would drop
// it). A truncated gzip stream is an error too. A trailing '\r' and a UTF-8 byte-order mark at
// the start of the file are stripped. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include <zlib.h>

#include "core/bounded_file.h"
#include "core/result.h"

namespace aiscale::sim::traces {

// One line (or one CSV record) may be at most this long.
inline constexpr size_t kMaxLineBytes = 1 << 20;

class LineReader {
 public:
  LineReader() = default;
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Fails with "unable to read trace FILE: cause" when the file cannot be read or is not a
  // regular file within `limit`.
  Status Open(const std::string& path, const FileLimit& limit = kTraceFileLimit);
  // Reads the next line into `line` (without the newline). Returns false at end of file; a
  // read error, a line past kMaxLineBytes or bad gzip data is reported through status().
  bool Next(std::string& line);
  const Status& status() const { return status_; }
  long line_number() const { return line_number_; }
  const std::string& path() const { return path_; }
  // "FILE:LINE" of the line last returned.
  std::string Where() const;

 private:
  static constexpr size_t kBufBytes = 1 << 16;
  long ReadRaw();     // more file bytes into in_; bytes read, 0 at end of file, -1 on error
  bool Fill();        // more decoded bytes into out_; false at the end of the data or on error
  bool NextMember();  // after a gzip member: another one follows (true) or the end / an error
  Status Fail(const std::string& what);

  int fd_ = -1;
  FileLimit limit_ = kTraceFileLimit;
  std::string path_;
  long line_number_ = 0;
  Status status_;
  bool gzip_ = false;
  bool member_done_ = false;
  bool zs_init_ = false;
  z_stream zs_{};
  unsigned char in_[kBufBytes];
  size_t in_pos_ = 0, in_len_ = 0;
  uint64_t in_base_ = 0;  // file offset of in_[0]
  char out_[kBufBytes];
  size_t out_pos_ = 0, out_len_ = 0;
  uint64_t decoded_ = 0;
};

}  // namespace aiscale::sim::traces
