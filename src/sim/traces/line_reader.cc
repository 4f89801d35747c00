#include "sim/traces/line_reader.h"

#include <cerrno>
#include <cstring>

namespace aiscale::sim::traces {

LineReader::~LineReader() {
  if (file_ != nullptr) gzclose(file_);
}

Status LineReader::Open(const std::string& path) {
  path_ = path;
  line_number_ = 0;
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    return Status::Error("unable to open trace " + path + ": " + std::strerror(errno));
  }
  gzbuffer(file_, 1 << 17);
  return Status::Ok();
}

bool LineReader::Next(std::string& line) {
  line.clear();
  if (file_ == nullptr || !status_.ok()) return false;
  bool got_any = false;
  bool complete = false;
  while (gzgets(file_, buf_, sizeof(buf_)) != nullptr) {
    got_any = true;
    size_t n = std::strlen(buf_);
    complete = n > 0 && buf_[n - 1] == '\n';
    if (complete) --n;
    line.append(buf_, n);
    if (complete) break;
  }
  // A last line without a newline is a line, unless the stream broke there (a truncated
  // gzip): then report the break rather than parse half a row.
  if (!complete) {
    int err = 0;
    const char* msg = gzerror(file_, &err);
    if (err != Z_OK && err != Z_STREAM_END) {
      status_ = Status::Error("unable to read trace " + path_ + " after line " +
                              std::to_string(line_number_) + ": " + msg);
      return false;
    }
    if (!got_any) return false;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++line_number_;
  return true;
}

std::string LineReader::Where() const { return path_ + ":" + std::to_string(line_number_); }

}  // namespace aiscale::sim::traces
