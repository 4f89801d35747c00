// Trace loaders on the real shared traces (read from ../shared, never copied) and on a table
// of malformed files written to a temp dir: every error names file, line and field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <zlib.h>

#include "sim/traces/alibaba_genai_trace.h"
#include "sim/traces/azure_llm_trace.h"
#include "sim/traces/mooncake_trace.h"
#include "sim/traces/rate_series.h"
#include "sim/traces/trace_transform.h"

namespace aiscale::sim::traces {
namespace {

std::string Shared(const std::string& rel) { return std::string(AISCALE_SHARED_DIR) + "/" + rel; }

std::vector<TraceRequest> Load(const RequestSource& src) {
  auto s = src.Open();
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  auto all = ReadAll(**s);
  EXPECT_TRUE(all.ok()) << all.status().message();
  return all.ok() ? *all : std::vector<TraceRequest>{};
}

bool Monotonic(const std::vector<TraceRequest>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].arrival_ns < v[i - 1].arrival_ns) return false;
  }
  return true;
}

TEST(TraceLoader, RealTraces) {
  struct Case {
    std::string name;
    std::unique_ptr<RequestSource> src;
    size_t count;
    double min_span_s, max_span_s;
  };
  std::vector<Case> cases;
  cases.push_back({"azure code",
                   AzureLlmTrace(Shared("traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv")),
                   8819, 3400, 3500});
  cases.push_back({"azure conv",
                   AzureLlmTrace(Shared("traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv")),
                   19366, 3450, 3550});
  cases.push_back({"mooncake",
                   MooncakeTrace(Shared("traces/mooncake_fast25/conversation_trace.jsonl.gz")),
                   12031, 3530, 3540});
  cases.push_back(
      {"alibaba genai",
       AlibabaGenAiTrace(Shared("traces/alibaba_genai_v2026/lora_request_trace.csv.gz")), 26823,
       23 * 86400 - 3600, 23 * 86400 + 3600});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto v = Load(*c.src);
    ASSERT_EQ(v.size(), c.count);
    EXPECT_TRUE(Monotonic(v));
    EXPECT_EQ(v.front().arrival_ns, 0);
    const double span = v.back().arrival_ns / 1e9;
    EXPECT_GE(span, c.min_span_s);
    EXPECT_LE(span, c.max_span_s);
    for (const auto& r : v) ASSERT_GE(r.output_tokens, 1u);
  }
}

TEST(TraceLoader, AzureFirstRowValues) {
  const auto v =
      Load(*AzureLlmTrace(Shared("traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv")));
  ASSERT_GE(v.size(), 2u);
  EXPECT_EQ(v[0].input_tokens, 4808u);
  EXPECT_EQ(v[0].output_tokens, 10u);
  // 18:17:04.0319600 - 18:17:03.9799600 = 52 ms, kept to the nanosecond.
  EXPECT_EQ(v[1].arrival_ns, 52'000'000);
}

void WriteFile(const std::string& path, const std::string& text, bool gz) {
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
  } else {
    std::ofstream(path) << text;
  }
}

TEST(TraceLoader, MalformedInputsNameFileLineAndField) {
  struct Case {
    std::string name;
    std::string format;  // azure | mooncake | alibaba | rate
    std::string text;
    std::string want;  // substring after "FILE"
  };
  const std::string ali_header =
      "gmt_create,predict_type,predict_status,exec_time_seconds,groupId,prompt_length,"
      "negative_prompt_length,num_images_per_prompt,num_inference_steps,"
      "checkpoint_model_version_id,num_lora\n";
  const std::vector<Case> cases = {
      {"empty file", "azure", "", ":1: empty file"},
      {"header only", "azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n", ":1: empty trace"},
      {"missing column", "azure", "TIMESTAMP,ContextTokens\n2023-11-16 18:17:03.97,1\n",
       ":1: field GeneratedTokens: missing column"},
      {"unparsable number", "azure",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,12,3\n"
       "2023-11-16 18:17:04.0,abc,3\n",
       ":3: field ContextTokens: unparsable number 'abc'"},
      {"missing value", "azure",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,12\n",
       ":2: field GeneratedTokens: missing value"},
      {"bad timestamp", "azure",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-16 18:17:03.9,12,3\n",
       ":2: field TIMESTAMP: no such date or time"},
      {"negative tokens", "azure",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,-4,3\n",
       ":2: field ContextTokens: must be a non-negative whole number"},
      {"backwards time", "azure",
       "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:05,1,1\n"
       "2023-11-16 18:17:04,1,1\n",
       ":3: field TIMESTAMP: time goes backwards"},
      {"mooncake not json", "mooncake",
       "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 2}\n{oops\n",
       ":2: not a JSON object"},
      {"mooncake missing field", "mooncake", "{\"timestamp\": 0, \"input_length\": 5}\n",
       ":1: field output_length: missing field"},
      {"mooncake string number", "mooncake",
       "{\"timestamp\": \"x\", \"input_length\": 5, \"output_length\": 2}\n",
       ":1: field timestamp: not a number"},
      {"mooncake backwards", "mooncake",
       "{\"timestamp\": 10, \"input_length\": 5, \"output_length\": 2}\n"
       "{\"timestamp\": 9, \"input_length\": 5, \"output_length\": 2}\n",
       ":2: field timestamp: time goes backwards"},
      {"mooncake empty", "mooncake", "", ":0: empty trace"},
      {"alibaba bad steps", "alibaba",
       ali_header + "2024-11-15 16:57:50,TXT_2_IMG,SUCCEED,32.0,G0,63.0,26.0,1.0,thirty,M0,0\n",
       ":2: field num_inference_steps: unparsable number 'thirty'"},
      {"alibaba missing column", "alibaba", "gmt_create,prompt_length\n2024-11-15 16:57:50,3\n",
       ":1: field num_images_per_prompt: missing column"},
      {"rate series backwards", "rate", "t_s,rate_per_s\n0,1\n10,2\n5,3\n",
       ":4: field t_s: time goes backwards"},
      {"rate series bad rate", "rate", "t_s,rate_per_s\n0,1\n10,fast\n",
       ":3: field rate_per_s: unparsable number 'fast'"},
  };
  const auto dir =
      std::filesystem::temp_directory_path() / ("aiscale_traces_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int i = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const bool gz = c.format == "mooncake" || c.format == "alibaba";
    const std::string path =
        (dir / ("case" + std::to_string(i++) + (gz ? ".gz" : ".csv"))).string();
    WriteFile(path, c.text, gz);
    Status st;
    if (c.format == "rate") {
      st = LoadRateSeriesCsv(path).status();
    } else {
      auto src = c.format == "azure"      ? AzureLlmTrace(path)
                 : c.format == "mooncake" ? MooncakeTrace(path)
                                          : AlibabaGenAiTrace(path);
      auto s = src->Open();
      ASSERT_TRUE(s.ok());
      st = ReadAll(**s).status();
    }
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(path + c.want), std::string::npos) << st.message();
  }
  std::filesystem::remove_all(dir);
}

TEST(TraceLoader, MissingFileIsAnError) {
  auto s = AzureLlmTrace("/nonexistent/trace.csv")->Open();
  ASSERT_TRUE(s.ok());
  const Status st = ReadAll(**s).status();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent/trace.csv"), std::string::npos);
}

TEST(TraceTransform, MultiplierCompressionAndWindow) {
  struct Case {
    std::string name;
    TransformOptions o;
    double want_ratio;  // count vs original
    double tolerance;
  };
  auto opts = [](double k, double c, double start, double dur) {
    TransformOptions o;
    o.rate_multiplier = k;
    o.time_compression = c;
    o.start_s = start;
    o.duration_s = dur;
    o.seed = 7;
    return o;
  };
  const std::string path = Shared("traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
  const auto base = Load(*AzureLlmTrace(path));
  ASSERT_FALSE(base.empty());  // a missing trace fails here, not as a crash below
  const std::vector<Case> cases = {
      {"x3", opts(3, 1, 0, 0), 3.0, 0.0},
      {"x2.5", opts(2.5, 1, 0, 0), 2.5, 0.02},
      {"thin x0.25", opts(0.25, 1, 0, 0), 0.25, 0.03},
      {"compress x4", opts(1, 4, 0, 0), 1.0, 0.0},
      {"first half", opts(1, 1, 0, 1750), 0.5, 0.1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto v = Load(*Transformed(AzureLlmTrace(path), c.o));
    ASSERT_FALSE(v.empty());
    const double ratio = static_cast<double>(v.size()) / static_cast<double>(base.size());
    EXPECT_NEAR(ratio, c.want_ratio, c.tolerance);
    EXPECT_TRUE(Monotonic(v));
    const double span = v.back().arrival_ns / 1e9;
    const double base_span = (c.o.duration_s > 0 ? c.o.duration_s : base.back().arrival_ns / 1e9);
    EXPECT_LE(span, base_span / c.o.time_compression + 61);
    // Same seed, same requests.
    const auto again = Load(*Transformed(AzureLlmTrace(path), c.o));
    ASSERT_EQ(again.size(), v.size());
    EXPECT_EQ(again.back().arrival_ns, v.back().arrival_ns);
  }
}

TEST(RateSeries, PoissonCountsFollowTheRate) {
  RateSeriesOptions o;
  o.points = {{0, 100}, {100, 0}, {200, 300}, {300, 0}};
  o.seed = 3;
  auto src = RateSeries(o);
  ASSERT_TRUE(src.ok());
  const auto v = Load(**src);
  EXPECT_TRUE(Monotonic(v));
  size_t first = 0, gap = 0, third = 0;
  for (const auto& r : v) {
    const double t = r.arrival_ns / 1e9;
    (t < 100 ? first : t < 200 ? gap : third)++;
  }
  EXPECT_NEAR(first, 10000, 400);  // 4 sigma of Poisson(10000)
  EXPECT_EQ(gap, 0u);
  EXPECT_NEAR(third, 30000, 700);
  RateSeriesOptions bad = o;
  bad.points = {{0, 1}, {0, 2}};
  EXPECT_FALSE(RateSeries(bad).ok());
}

}  // namespace
}  // namespace aiscale::sim::traces
