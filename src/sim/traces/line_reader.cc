#include "sim/traces/line_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace aiscale::sim::traces {

LineReader::~LineReader() {
  if (zs_init_) inflateEnd(&zs_);
  if (fd_ >= 0) ::close(fd_);
}

Status LineReader::Fail(const std::string& what) {
  status_ = Status::Invalid("unable to read " + std::string(limit_.kind) + " " + path_ +
                            " after line " + std::to_string(line_number_) + ": " + what);
  return status_;
}

Status LineReader::Open(const std::string& path, const FileLimit& limit) {
  path_ = path;
  limit_ = limit;
  line_number_ = 0;
  ASSIGN_OR_RETURN(fd_, OpenBoundedFile(path, limit));
  while (in_len_ < 2) {
    const long n = ReadRaw();
    if (n < 0) return status_;
    if (n == 0) break;
  }
  gzip_ = in_len_ >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
  if (gzip_) {
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) return Fail("zlib initialisation failed");
    zs_init_ = true;
  }
  return Status::Ok();
}

long LineReader::ReadRaw() {
  if (in_pos_ > 0) {
    std::memmove(in_, in_ + in_pos_, in_len_ - in_pos_);
    in_base_ += in_pos_;
    in_len_ -= in_pos_;
    in_pos_ = 0;
  }
  while (true) {
    const ssize_t n = ::read(fd_, in_ + in_len_, kBufBytes - in_len_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Fail(std::strerror(errno));
      return -1;
    }
    in_len_ += static_cast<size_t>(n);
    return static_cast<long>(n);
  }
}

bool LineReader::NextMember() {
  while (in_len_ - in_pos_ < 2) {
    const long n = ReadRaw();
    if (n < 0) return false;
    if (n == 0) break;
  }
  const size_t left = in_len_ - in_pos_;
  if (left == 0) return false;  // the clean end
  if (left < 2 || in_[in_pos_] != 0x1f || in_[in_pos_ + 1] != 0x8b) {
    Fail("the data after the end of the gzip stream (at byte " +
         std::to_string(in_base_ + in_pos_) +
         ") is not gzip; rows appended uncompressed to a .gz file are refused, not dropped");
    return false;
  }
  inflateReset(&zs_);
  member_done_ = false;
  return true;
}

bool LineReader::Fill() {
  out_pos_ = out_len_ = 0;
  while (out_len_ == 0) {
    if (gzip_ && member_done_ && !NextMember()) return false;
    if (in_pos_ == in_len_) {
      const long n = ReadRaw();
      if (n < 0) return false;
      if (n == 0) {
        if (gzip_) Fail("unexpected end of file (the gzip stream is truncated)");
        return false;
      }
    }
    if (!gzip_) {
      out_len_ = std::min(in_len_ - in_pos_, kBufBytes);
      std::memcpy(out_, in_ + in_pos_, out_len_);
      in_pos_ += out_len_;
      break;
    }
    zs_.next_in = in_ + in_pos_;
    zs_.avail_in = static_cast<uInt>(in_len_ - in_pos_);
    zs_.next_out = reinterpret_cast<Bytef*>(out_);
    zs_.avail_out = static_cast<uInt>(kBufBytes);
    const int rc = inflate(&zs_, Z_NO_FLUSH);
    in_pos_ = in_len_ - zs_.avail_in;
    out_len_ = kBufBytes - zs_.avail_out;
    if (rc == Z_STREAM_END) {
      member_done_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      Fail(std::string("bad gzip data near byte ") + std::to_string(in_base_ + in_pos_) + ": " +
           (zs_.msg ? zs_.msg : "inflate error " + std::to_string(rc)));
      return false;
    }
  }
  decoded_ += out_len_;
  const uint64_t max = limit_.max_decoded ? limit_.max_decoded : limit_.max_bytes;
  if (decoded_ > max) {
    Fail("more than " + std::to_string(max) + " bytes of data (decompressed), the limit");
    return false;
  }
  return true;
}

bool LineReader::Next(std::string& line) {
  line.clear();
  if (fd_ < 0 || !status_.ok()) return false;
  bool got_any = false;
  while (true) {
    if (out_pos_ == out_len_ && !Fill()) {
      // A last line without a newline is a line, unless the stream broke there (a truncated
      // gzip): then the error is reported rather than half a row parsed.
      if (!status_.ok() || !got_any) return false;
      break;
    }
    const char* start = out_ + out_pos_;
    const size_t avail = out_len_ - out_pos_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', avail));
    const size_t take = nl ? static_cast<size_t>(nl - start) : avail;
    if (line.size() + take > kMaxLineBytes) {
      Fail("the next line is longer than " + std::to_string(kMaxLineBytes) + " bytes, the limit");
      return false;
    }
    line.append(start, take);
    got_any = true;
    out_pos_ += take + (nl ? 1 : 0);
    if (nl) break;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // A UTF-8 byte-order mark (spreadsheet exports write one) is not part of the first column.
  if (line_number_ == 0 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  ++line_number_;
  return true;
}

std::string LineReader::Where() const { return path_ + ":" + std::to_string(line_number_); }

}  // namespace aiscale::sim::traces
