// Helpers shared by the libFuzzer harnesses: the fuzz input as a string, and as a file for the
// parsers that only read paths (the trace loaders).
//
// Why a memfd: the loaders open files by name (gzopen), and a fuzzer runs thousands of inputs a
// second; an in-memory file reached through /proc/self/fd/N costs no disk and leaves nothing
// behind. Not thread-safe (libFuzzer runs one input at a time per process).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace aiscale::fuzz {

inline std::string AsString(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// One in-memory file per process, rewritten with each input.
class MemFile {
 public:
  MemFile() : fd_(memfd_create("aiscale-fuzz", 0)) {
    if (fd_ < 0) std::abort();  // the harness cannot run at all
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  // Replaces the file's contents with `data` and returns its path.
  const std::string& Write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

}  // namespace aiscale::fuzz
