// Every trace loader against every kind of malformed file the issue lists (missing columns,
// unparsable numbers, timestamps going backwards, empty files), plus a truncated gzip: each is
// an error, never a crash, that names the file, the line and (where there is one) the field.
// The files are written to a temp dir, gzipped as the real traces are.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/fixtures.h"

#include "sim/traces/alibaba_genai_trace.h"
#include "sim/traces/azure_llm_trace.h"
#include "sim/traces/mooncake_trace.h"

namespace aiscale::sim::traces {
namespace {

using fixtures::Gzip;

const std::string kAzure = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
const std::string kAli =
    "gmt_create,predict_type,predict_status,exec_time_seconds,groupId,prompt_length,"
    "negative_prompt_length,num_images_per_prompt,num_inference_steps,"
    "checkpoint_model_version_id,num_lora\n";
std::string AliRow(const std::string& time, const std::string& prompt, const std::string& steps) {
  return time + ",TXT_2_IMG,SUCCEED,32.0,G0," + prompt + ",26.0,1.0," + steps + ",M0,0\n";
}
std::string Moon(const std::string& ts, const std::string& in, const std::string& out) {
  return "{\"timestamp\": " + ts + ", \"input_length\": " + in + ", \"output_length\": " + out +
         "}\n";
}

TEST(TraceErrors, EveryLoaderNamesFileLineAndField) {
  struct Case {
    std::string name;
    std::string format;  // azure | mooncake | alibaba
    std::string text;
    std::string want;  // what follows the file name in the message
  };
  const std::vector<Case> cases = {
      // azure_llm (CSV)
      {"azure missing column", "azure", "TIMESTAMP,GeneratedTokens\n2023-11-16 18:17:03,1\n",
       ":1: field ContextTokens: missing column"},
      {"azure missing value", "azure", kAzure + "2023-11-16 18:17:03,5\n",
       ":2: field GeneratedTokens: missing value"},
      {"azure unparsable number", "azure",
       kAzure + "2023-11-16 18:17:03,5,1\n2023-11-16 18:17:04,5,1e\n",
       ":3: field GeneratedTokens: unparsable number '1e'"},
      {"azure infinite number", "azure", kAzure + "2023-11-16 18:17:03,inf,1\n",
       ":2: field ContextTokens: unparsable number 'inf'"},
      {"azure unparsable time", "azure", kAzure + "yesterday,5,1\n",
       ":2: field TIMESTAMP: unparsable timestamp 'yesterday'"},
      {"azure backwards", "azure",
       kAzure + "2023-11-16 18:17:03,5,1\n2023-11-16 18:17:04,5,1\n2023-11-16 18:17:03.5,5,1\n",
       ":4: field TIMESTAMP: time goes backwards"},
      {"azure empty file", "azure", "", ":1: empty file"},
      {"azure header only", "azure", kAzure, ":1: empty trace"},
      // mooncake (JSONL, gzipped)
      {"mooncake missing field", "mooncake", Moon("0", "5", "2") + "{\"timestamp\": 1}\n",
       ":2: field input_length: missing field"},
      {"mooncake string number", "mooncake", Moon("\"soon\"", "5", "2"),
       ":1: field timestamp: not a number: \"soon\""},
      {"mooncake unparsable number", "mooncake", Moon("0", "5", "2") + Moon("1.2.3", "5", "2"),
       ":2: field timestamp: unparsable number '1.2.3'"},
      {"mooncake unparsable value", "mooncake", Moon("0", "five", "2"),
       ":1: field input_length: unparsable value 'five'"},
      {"mooncake negative", "mooncake", Moon("0", "5", "-2"),
       ":1: field output_length: must be a finite number >= 0"},
      {"mooncake backwards", "mooncake",
       Moon("5", "1", "1") + Moon("7", "1", "1") + Moon("6", "1", "1"),
       ":3: field timestamp: time goes backwards"},
      {"mooncake not an object", "mooncake", Moon("0", "5", "2") + "[1, 2]\n",
       ":2: not a JSON object"},
      {"mooncake empty file", "mooncake", "", ":0: empty trace"},
      // alibaba_genai (CSV, gzipped)
      {"alibaba missing column", "alibaba",
       "gmt_create,prompt_length,num_images_per_prompt\n2024-11-15 16:57:50,3,1\n",
       ":1: field num_inference_steps: missing column"},
      {"alibaba unparsable number", "alibaba",
       kAli + AliRow("2024-11-15 16:57:50", "63.0", "30") +
           AliRow("2024-11-15 16:57:51", "6x", "30"),
       ":3: field prompt_length: unparsable number '6x'"},
      {"alibaba fractional count", "alibaba", kAli + AliRow("2024-11-15 16:57:50", "63.0", "2.5"),
       ":2: field num_inference_steps: must be a non-negative whole number"},
      {"alibaba unparsable time", "alibaba", kAli + AliRow("2024-11-15 16:57", "63.0", "30"),
       ":2: field gmt_create: unparsable timestamp"},
      {"alibaba backwards", "alibaba",
       kAli + AliRow("2024-11-15 16:57:50", "63.0", "30") +
           AliRow("2024-11-15 16:57:49", "63.0", "30"),
       ":3: field gmt_create: time goes backwards"},
      {"alibaba empty file", "alibaba", "", ":1: empty file"},
      {"alibaba header only", "alibaba", kAli, ":1: empty trace"},
  };
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("aiscale_trace_errors_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int i = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const bool gz = c.format != "azure";
    const std::string path = (dir / ("t" + std::to_string(i++) + (gz ? ".gz" : ".csv"))).string();
    std::ofstream(path, std::ios::binary) << (gz ? Gzip(c.text) : c.text);
    auto src = c.format == "azure"      ? AzureLlmTrace(path)
               : c.format == "mooncake" ? MooncakeTrace(path)
                                        : AlibabaGenAiTrace(path);
    auto s = src->Open();
    ASSERT_TRUE(s.ok());
    const Status st = ReadAll(**s).status();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.message().rfind(path + c.want, 0), 0u)
        << "want " << path + c.want << "\ngot  " << st.message();
    // The stream stays stopped after an error.
    std::vector<TraceRequest> more;
    EXPECT_FALSE((*s)->Next(more, 10).ok());
    EXPECT_TRUE(more.empty());
  }
  std::filesystem::remove_all(dir);
}

TEST(TraceErrors, TruncatedGzipNamesTheFileAndTheLastGoodLine) {
  std::string rows;
  for (int i = 0; i < 2000; ++i) rows += Moon(std::to_string(i), "100", "10");
  const std::string gz = Gzip(rows);
  const auto path = (std::filesystem::path(::testing::TempDir()) /
                     ("aiscale_truncated_" + std::to_string(::getpid()) + ".jsonl.gz"))
                        .string();
  std::ofstream(path, std::ios::binary) << gz.substr(0, gz.size() / 2);
  auto s = MooncakeTrace(path)->Open();
  ASSERT_TRUE(s.ok());
  const Status st = ReadAll(**s).status();
  std::filesystem::remove(path);
  ASSERT_FALSE(st.ok());
  // The cut row is not parsed as if it were whole: the broken stream is reported.
  EXPECT_EQ(st.message().rfind("unable to read trace " + path + " after line ", 0), 0u)
      << st.message();
  EXPECT_NE(st.message().find("unexpected end of file"), std::string::npos) << st.message();
}

TEST(TraceErrors, LastLineWithoutNewlineIsARow) {
  for (const bool gz : {false, true}) {
    SCOPED_TRACE(gz ? "gzip" : "plain");
    const auto path = (std::filesystem::path(::testing::TempDir()) /
                       ("aiscale_no_newline_" + std::to_string(::getpid()) + (gz ? ".gz" : ".csv")))
                          .string();
    const std::string text = kAzure + "2023-11-16 18:17:03,5,1\n2023-11-16 18:17:04,7,2";
    std::ofstream(path, std::ios::binary) << (gz ? Gzip(text) : text);
    auto s = AzureLlmTrace(path)->Open();
    ASSERT_TRUE(s.ok());
    auto all = ReadAll(**s);
    std::filesystem::remove(path);
    ASSERT_TRUE(all.ok()) << all.status().message();
    ASSERT_EQ(all->size(), 2u);
    EXPECT_EQ((*all)[1].arrival_ns, 1'000'000'000);
    EXPECT_EQ((*all)[1].input_tokens, 7u);
  }
}

}  // namespace
}  // namespace aiscale::sim::traces
