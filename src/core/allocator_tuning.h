// TuneAllocator: the process-wide glibc malloc setting every aiscale process runs with, set
// once at the top of main (the CLI's and the benchmarks', so both measure the same allocator).
//
// Why: a controller tick frees some 10^5 small blocks (the last tick's decisions, readings
// and reasons) and allocates a few large ones (the tick's decision vector, SQLite's pages).
// glibc parks small frees in "fastbins" and, on the next large request or large free, walks
// every parked block to coalesce it (malloc_consolidate): at 10,000 workloads that walk was
// 16% of the SQLite tick's samples (perf), each block a cache miss. With fastbins off small
// frees still go to the per-thread cache first, and the rest coalesce when freed, while the
// block is still in cache. The default build links tcmalloc_minimal instead (CMakeLists.txt:
// a third faster again), whose mallopt does nothing; this setting is for a build on glibc's.
#pragma once

namespace aiscale {

// Returns false when the C library refused the setting (not glibc, or a future glibc
// without the parameter); the process then runs with the default allocator, only slower.
bool TuneAllocator();

}  // namespace aiscale
