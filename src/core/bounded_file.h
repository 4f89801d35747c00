// BoundedFile: the one way aiscale opens an input file (config and scenario YAML, traces,
// conformance JSON, token and CA files): only regular files, only up to a size limit per kind.
//
// Why: a path that names /dev/zero, a FIFO with no writer, a directory or a socket must fail
// at once with a clear message instead of hanging in open() or reading until memory runs out
// (issue 11); so must a kernel pseudo-file under /proc or /sys (it looks regular, with size
// 0, and may never end). The kind is checked with stat() before anything is opened, so a FIFO
// is never opened; the open itself uses O_NONBLOCK and fstat() checks the kind again (the path
// may be swapped between the two). Errors read "unable to read KIND PATH: cause" with code kInvalid
// for a wrong kind or size, kNotFound for a missing file, kPermissionDenied for EACCES.
// Stateless and thread-safe.
//
//   ASSIGN_OR_RETURN(std::string text, ReadBoundedFile(path, kConfigFileLimit));
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace aiscale {

// What a file is read as (in errors) and how large it may be.
struct FileLimit {
  const char* kind;      // "config", "trace", ...
  uint64_t max_bytes;    // on disk
  uint64_t max_decoded;  // after decompression (traces); 0 = same as max_bytes
};

// Config and scenario YAML: a hand-written file, far below this (10,000 workloads of ~20
// lines each are ~4 MiB). yaml-cpp holds ~70 bytes per byte read: an 8 MiB config takes ~8 s
// and ~600 MB to validate, a 16 MiB one took 12-16 s and over 1 GiB.
inline constexpr FileLimit kConfigFileLimit{"config file", 8ull << 20, 0};
// Conformance vectors (JSON).
inline constexpr FileLimit kConformanceFileLimit{"conformance file", 64ull << 20, 0};
// Secrets and certificates named by a config (bearer token, CA bundle, kubeconfig).
inline constexpr FileLimit kSecretFileLimit{"credential file", 1ull << 20, 0};
// Traces (CSV, JSONL, plain or gzip): the largest public traces are a few GB uncompressed.
inline constexpr FileLimit kTraceFileLimit{"trace", 8ull << 30, 32ull << 30};
// A training job's events log (JSONL, one line per step, phase or checkpoint event).
inline constexpr FileLimit kEventsFileLimit{"events log", 1ull << 30, 0};
// A rate-series CSV: a list of points.
inline constexpr FileLimit kRateSeriesFileLimit{"rate series", 64ull << 20, 256ull << 20};

// Checks that `path` is a regular file of at most limit.max_bytes, without opening it.
// Returns its size.
Result<uint64_t> CheckRegularFile(const std::string& path, const FileLimit& limit);

// Opens `path` read-only (O_NONBLOCK, O_CLOEXEC) after CheckRegularFile, and checks the opened
// descriptor again. The caller owns the returned descriptor.
Result<int> OpenBoundedFile(const std::string& path, const FileLimit& limit);

// Reads the whole file (see OpenBoundedFile); fails if it grows past the limit while read.
Result<std::string> ReadBoundedFile(const std::string& path, const FileLimit& limit);

}  // namespace aiscale
