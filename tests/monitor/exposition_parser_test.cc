#include "monitor/exposition_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "monitor/testdata_util.h"

namespace aiscale::monitor {
namespace {

using testing::ReadTestdata;

Exposition MustParse(std::string text, ExpositionFormat f = ExpositionFormat::kPrometheusText) {
  auto r = ParseExposition(std::move(text), f);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) std::abort();
  return std::move(r).value();
}

// The first sample called `name` whose label `label` is `value` (any when label is empty).
const Sample* FindSample(const Exposition& e, std::string_view name, std::string_view label = "",
                         std::string_view value = "") {
  for (const Sample& s : e.samples()) {
    if (s.name == name && (label.empty() || e.Label(s, label) == value)) return &s;
  }
  return nullptr;
}

TEST(ExpositionParser, RealPayloads) {
  struct Spot {
    std::string sample;
    std::string label;
    std::string value;
    double want;
  };
  struct Case {
    std::string file;
    ExpositionFormat format;
    size_t samples;
    std::vector<std::pair<std::string, MetricType>> families;
    std::vector<Spot> spots;
  };
  const auto kProm = ExpositionFormat::kPrometheusText;
  const std::vector<Case> cases = {
      {"dcgm_exporter_v3.txt",
       kProm,
       18,
       {{"DCGM_FI_DEV_GPU_UTIL", MetricType::kGauge},
        {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", MetricType::kCounter}},
       {{"DCGM_FI_DEV_GPU_UTIL", "gpu", "1", 12},
        {"DCGM_FI_DEV_POWER_USAGE", "Hostname", "node3", 612.344},
        {"DCGM_FI_DEV_MEMORY_TEMP", "gpu", "0", 9223372036854775794.0},
        {"DCGM_FI_PROF_SM_ACTIVE", "modelName", "NVIDIA H100 80GB HBM3", 0.873}}},
      {"dcgm_exporter_v2_k8s.txt",
       kProm,
       4,
       {{"DCGM_FI_DEV_SM_CLOCK", MetricType::kGauge}},
       {{"DCGM_FI_DEV_GPU_UTIL", "UUID", "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52", 64},
        {"DCGM_FI_DEV_MEM_CLOCK", "pod", "", 405}}},
      {"dcgm_gpu_monitoring_tools_1x.txt",
       kProm,
       6,
       {{"dcgm_total_energy_consumption", MetricType::kCounter}},
       {{"dcgm_total_energy_consumption", "uuid", "GPU-8f640a3c-7e9a-608d-02a3-f4372d72b323",
         7.824041e6}}},
      {"vllm_v1.txt",
       kProm,
       63,
       {{"vllm:time_to_first_token_seconds", MetricType::kHistogram},
        {"vllm:request_success_total", MetricType::kCounter},
        {"vllm:request_success_created", MetricType::kGauge}},
       {{"vllm:time_to_first_token_seconds_bucket", "le", "0.25", 102},
        {"vllm:time_to_first_token_seconds_bucket", "le", "+Inf", 178},
        {"vllm:request_success_total", "finished_reason", "length", 28},
        {"vllm:generation_tokens_created", "engine", "0", 1.7898432023697093e+09}}},
      {"vllm_openmetrics.txt",
       ExpositionFormat::kOpenMetrics,
       16,
       {{"vllm:request_success", MetricType::kCounter},
        {"process_cpu_seconds", MetricType::kCounter}},
       {{"vllm:request_success_total", "finished_reason", "stop", 150},
        {"vllm:time_to_first_token_seconds_bucket", "le", "0.25", 102},
        {"process_cpu_seconds_total", "", "", 4.20072246e+06}}},
      {"training.txt",
       kProm,
       13,
       {{"aiscale_training_phase", MetricType::kGauge}},
       {{"aiscale_training_phase", "phase", "compute", 1}}},
      {"prometheus_docs_example.txt",
       kProm,
       20,
       {{"http_request_duration_seconds", MetricType::kHistogram},
        {"telemetry_requests_metrics_latency_microseconds", MetricType::kSummary},
        {"metric_without_timestamp_and_labels", MetricType::kUntyped}},
       {{"http_requests_total", "code", "400", 3},
        {"telemetry_requests_metrics_latency_microseconds", "quantile", "0.99", 76656},
        {"telemetry_requests_metrics_latency_microseconds_sum", "", "", 1.7560473e+07}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    std::string text = ReadTestdata(c.file);
    ASSERT_FALSE(text.empty());
    auto r = ParseExposition(text, c.format);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->samples().size(), c.samples);
    for (const auto& [name, type] : c.families) {
      auto fams = r->FindFamilies(name);
      ASSERT_EQ(fams.size(), 1u) << name;
      EXPECT_EQ(MetricTypeName(fams[0]->type), MetricTypeName(type)) << name;
    }
    for (const Spot& s : c.spots) {
      const Sample* got = FindSample(*r, s.sample, s.label, s.value);
      ASSERT_NE(got, nullptr) << s.sample << "{" << s.label << "=" << s.value << "}";
      EXPECT_DOUBLE_EQ(got->value, s.want) << s.sample;
    }
  }
}

TEST(ExpositionParser, HistogramSamplesStayInTheirFamily) {
  Exposition e = MustParse(ReadTestdata("vllm_v1.txt"));
  auto fams = e.FindFamilies("vllm:e2e_request_latency_seconds");
  ASSERT_EQ(fams.size(), 1u);
  // 21 finite buckets + +Inf + _count + _sum; _created is its own gauge family (0.0.4 style).
  EXPECT_EQ(fams[0]->num_samples, 24u);
  for (const Sample& s : e.SamplesOf(*fams[0])) EXPECT_EQ(s.family, fams[0] - &e.families()[0]);
  EXPECT_EQ(fams[0]->help, "Histogram of e2e request latency in seconds.");
}

TEST(ExpositionParser, Escaping) {
  Exposition e = MustParse(ReadTestdata("prometheus_docs_example.txt"));
  const Sample* s = FindSample(e, "msdos_file_access_time_seconds");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(e.Label(*s, "path"), "C:\\DIR\\FILE.TXT");
  EXPECT_EQ(e.Label(*s, "error"), "Cannot find file:\n\"FILE.TXT\"");

  Exposition h = MustParse("# HELP x A \\\\ backslash and\\na newline.\nx{a=\"\\q\"} 1\n");
  EXPECT_EQ(h.families()[0].help, "A \\ backslash and\na newline.");
  EXPECT_EQ(h.Label(h.samples()[0], "a"), "\\q");  // unknown escape kept as written
}

TEST(ExpositionParser, TimestampsAndSpecialValues) {
  struct Case {
    std::string name;
    std::string line;
    ExpositionFormat format;
    double value;  // NaN compares as NaN
    bool has_ts;
    int64_t ts_ms;
  };
  const auto kProm = ExpositionFormat::kPrometheusText;
  const auto kOm = ExpositionFormat::kOpenMetrics;
  const double kNaN = std::nan("");
  const double kInf = INFINITY;
  const std::vector<Case> cases = {
      {"ms timestamp", "a 1027 1395066363000\n", kProm, 1027, true, 1395066363000},
      {"before the epoch", "a{p=\"z\"} +Inf -3982045\n", kProm, kInf, true, -3982045},
      {"no timestamp", "a 12.47\n", kProm, 12.47, false, 0},
      {"NaN", "a NaN\n", kProm, kNaN, false, 0},
      {"Nan (Go spelling)", "a Nan\n", kProm, kNaN, false, 0},
      {"-Inf", "a -Inf\n", kProm, -kInf, false, 0},
      {"exponent", "a 1.458255915e9\n", kProm, 1.458255915e9, false, 0},
      {"tabs and blanks", "a\t \t3 \t 7\t\n", kProm, 3, true, 7},
      {"CRLF", "a 3\r\n", kProm, 3, false, 0},
      {"seconds timestamp", "a 17.0 1520879607.789\n# EOF\n", kOm, 17, true, 1520879607789},
      {"om infinity", "a +Inf\n# EOF\n", kOm, kInf, false, 0},
      {"exemplar skipped", "a_bucket{le=\"1\"} 2 # {id=\"x\"} 0.5 123\n# EOF\n", kOm, 2, false, 0},
      {"start timestamp skipped", "a_total 5 st@1605281325.0\n# EOF\n", kOm, 5, false, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParseExposition(c.line, c.format);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->samples().size(), 1u);
    const Sample& s = r->samples()[0];
    if (std::isnan(c.value)) {
      EXPECT_TRUE(std::isnan(s.value));
    } else {
      EXPECT_EQ(s.value, c.value);
    }
    EXPECT_EQ(s.has_timestamp, c.has_ts);
    EXPECT_EQ(s.timestamp_ms, c.ts_ms);
  }
}

TEST(ExpositionParser, MalformedLinesNameTheLine) {
  struct Case {
    std::string name;
    std::string text;
    ExpositionFormat format;
    std::string want;  // substring of the error
  };
  const auto kProm = ExpositionFormat::kPrometheusText;
  const auto kOm = ExpositionFormat::kOpenMetrics;
  const std::vector<Case> cases = {
      {"bad value", "a 1\nb{x=\"1\"} one\n", kProm, "line 2: invalid value \"one\" for b"},
      {"missing value", "# TYPE a gauge\n\na{x=\"1\"}\n", kProm, "line 3: missing value for a"},
      {"no equals", "a{x \"1\"} 1\n", kProm, "line 1: expected '=' after label name \"x\""},
      {"unquoted value", "a{x=1} 1\n", kProm, "line 1: expected '\"'"},
      {"unterminated value", "a 1\na{x=\"1} 1\n", kProm, "line 2: unterminated quoted string"},
      {"unterminated labels", "a{x=\"1\" 1\n", kProm, "line 1: expected ',' or '}'"},
      {"bad name", "1abc 1\n", kProm, "line 1: invalid metric name"},
      {"bad label name", "a{1x=\"1\"} 1\n", kProm, "line 1: invalid label name"},
      {"bad timestamp", "a 1 12.5\n", kProm, "line 1: invalid timestamp \"12.5\""},
      {"trailing junk", "a 1 2 3\n", kProm, "line 1: unexpected \"3\" after the timestamp"},
      {"unknown type", "# TYPE a gauges\n", kProm, "line 1: unknown metric type"},
      {"second TYPE", "# TYPE a gauge\n# TYPE a gauge\n", kProm, "line 2: second TYPE line"},
      {"EOF missing", "# TYPE a gauge\na 1\n", kOm, "line 2: OpenMetrics exposition does not end"},
      {"content after EOF", "a 1\n# EOF\na 2\n", kOm, "line 3: content after '# EOF'"},
      {"bad om timestamp", "a 1 abc\n# EOF\n", kOm, "line 1: invalid timestamp \"abc\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParseExposition(c.text, c.format);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsInvalid());
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
}

TEST(ExpositionParser, LimitsBoundHostileInput) {
  ParseLimits small;
  small.max_bytes = 1024;
  small.max_samples = 10;
  small.max_labels_per_sample = 3;
  std::string big(2048, '#');
  auto too_big = ParseExposition(big, ExpositionFormat::kPrometheusText, small);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("exceeds the limit of 1024"), std::string::npos);

  std::string many;
  for (int i = 0; i < 11; ++i) many += "a{i=\"" + std::to_string(i) + "\"} 1\n";
  auto too_many = ParseExposition(many, ExpositionFormat::kPrometheusText, small);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("line 11: more than 10 samples"), std::string::npos)
      << too_many.status().message();

  auto labels = ParseExposition("a{a=\"1\",b=\"2\",c=\"3\",d=\"4\"} 1\n",
                                ExpositionFormat::kPrometheusText, small);
  ASSERT_FALSE(labels.ok());
  EXPECT_NE(labels.status().message().find("more than 3 labels"), std::string::npos);

  std::string families;
  for (int i = 0; i < 11; ++i) families += "# TYPE m" + std::to_string(i) + " gauge\n";
  EXPECT_FALSE(ParseExposition(families, ExpositionFormat::kPrometheusText, small).ok());
}

TEST(ExpositionParser, LenientWhereRealExportersDiffer) {
  struct Case {
    std::string name;
    std::string text;
    size_t labels;
  };
  const std::vector<Case> cases = {
      {"space after comma (dcgm-exporter 2.x)", "a{gpu=\"0\", UUID=\"x\"} 1\n", 2},
      {"trailing comma", "a{gpu=\"0\",} 1\n", 1},
      {"empty braces", "a{} 1\n", 0},
      {"blank lines and comments", "\n# just a comment\n   \na 1\n", 0},
      {"no final newline", "a{b=\"c\"} 1", 1},
      {"quoted OpenMetrics name", "{\"a\",b=\"c\"} 1\n", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParseExposition(c.text, ExpositionFormat::kPrometheusText);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->samples().size(), 1u);
    EXPECT_EQ(r->samples()[0].name, "a");
    EXPECT_EQ(r->samples()[0].num_labels, c.labels);
  }
}

TEST(ExpositionParser, CounterFoundByEitherName) {
  Exposition om = MustParse(ReadTestdata("vllm_openmetrics.txt"), ExpositionFormat::kOpenMetrics);
  EXPECT_EQ(om.FindFamilies("vllm:request_success_total").size(), 1u);
  EXPECT_EQ(om.FindFamilies("vllm:request_success").size(), 1u);
  Exposition prom = MustParse(ReadTestdata("vllm_v1.txt"));
  EXPECT_EQ(prom.FindFamilies("vllm:request_success").size(), 1u);
  EXPECT_EQ(prom.FindFamilies("vllm:num_requests_running_total").size(), 0u);  // a gauge
}

TEST(ExpositionParser, FormatFromContentType) {
  struct Case {
    std::string content_type;
    ExpositionFormat want;
  };
  const std::vector<Case> cases = {
      {"application/openmetrics-text; version=1.0.0; charset=utf-8",
       ExpositionFormat::kOpenMetrics},
      {"Application/OpenMetrics-Text", ExpositionFormat::kOpenMetrics},
      {"text/plain; version=0.0.4; charset=utf-8", ExpositionFormat::kPrometheusText},
      {"text/plain", ExpositionFormat::kPrometheusText},
      {"", ExpositionFormat::kPrometheusText},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.content_type);
    EXPECT_EQ(FormatFromContentType(c.content_type), c.want);
  }
}

TEST(ExpositionParser, ViewsSurviveMovingTheExposition) {
  // Short bodies live in std::string's inline buffer; the parser must not point into it.
  auto r = ParseExposition("a{b=\"c\"} 1\n", ExpositionFormat::kPrometheusText);
  ASSERT_TRUE(r.ok());
  Exposition moved = std::move(r).value();
  std::vector<Exposition> v;
  v.push_back(std::move(moved));
  EXPECT_EQ(v[0].samples()[0].name, "a");
  EXPECT_EQ(v[0].Label(v[0].samples()[0], "b"), "c");
}

}  // namespace
}  // namespace aiscale::monitor
