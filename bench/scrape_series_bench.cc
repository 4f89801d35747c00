// One scrape of a target with N series of one metric and no pod-like label (issue 27 §6: at
// 50,000 such series naming the instances took ~10 s, each series compared with every other,
// and at 200,000 the daemon no longer stopped on SIGTERM). A whole ScrapeSource::Fetch over a
// canned body: parse, evaluate, name the series, make the Observations. The time per series
// must stay flat from 50k to 200k (the complexity fit reports O(N)).
//
//   ninja -C build scrape_series_bench && ./build/scrape_series_bench
#include <benchmark/benchmark.h>

#include <string>

#include "core/http.h"
#include "monitor/scrape_source.h"

namespace aiscale::monitor {
namespace {

// `series` gauges of one metric told apart only by labels no preset prefers.
std::string Body(int series) {
  std::string out = "# TYPE app_queue_depth gauge\n";
  out.reserve(static_cast<size_t>(series) * 64);
  for (int i = 0; i < series; ++i) {
    out += "app_queue_depth{shard=\"s";
    out += std::to_string(i);
    out += "\",zone=\"z";
    out += std::to_string(i % 7);
    out += "\",build=\"b1\"} ";
    out += std::to_string(i % 100);
    out += "\n";
  }
  return out;
}

class CannedTarget final : public HttpClient {
 public:
  explicit CannedTarget(std::string body) : body_(std::move(body)) {}
  Result<HttpResponse> Send(const HttpRequest&) override {
    HttpResponse r;
    r.status = 200;
    r.body = body_;
    r.headers = {{"content-type", "text/plain; version=0.0.4"}};
    return r;
  }

 private:
  std::string body_;
};

void BM_ScrapeAndName(benchmark::State& state) {
  const int series = static_cast<int>(state.range(0));
  CannedTarget http(Body(series));
  ScrapeSourceConfig cfg;
  cfg.name = "big";
  cfg.urls = {"http://127.0.0.1:9/metrics"};
  ScrapeSource src(cfg, http, nullptr);
  MetricQuery q;
  q.workload = {"InferenceService", "", "svc"};
  q.signal = "queue_len";
  q.expression = "app_queue_depth";
  int64_t t = 0;
  size_t observations = 0;
  for (auto _ : state) {
    t += 10;  // a fresh scrape every iteration (past kReuseWithin)
    FetchResult r = src.Fetch(q, AtSeconds(static_cast<double>(t)));
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      break;
    }
    observations = r->size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["series"] = series;
  state.counters["observations"] = static_cast<double>(observations);
  state.counters["ns_per_series"] = benchmark::Counter(
      static_cast<double>(series),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetComplexityN(series);
}
BENCHMARK(BM_ScrapeAndName)
    ->Arg(50'000)
    ->Arg(100'000)
    ->Arg(200'000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace
}  // namespace aiscale::monitor

BENCHMARK_MAIN();
