// What the trace loaders used to accept silently (issue 11), one row per probe: quoted CSV
// fields with commas, quotes and newlines parse into the right columns in every CSV loader
// (azure, alibaba, rate series); duplicate header columns, impossible dates, duplicate JSON
// keys, fractional token counts, rows after a gzip member and special files are errors that
// name the file and line.
#include <sys/stat.h>
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
#include "sim/traces/rate_series.h"

namespace aiscale::sim::traces {
namespace {

using fixtures::Gzip;

const std::string kAzure = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
const std::string kAli =
    "gmt_create,note,prompt_length,num_images_per_prompt,num_inference_steps\n";
std::string Moon(const std::string& body) { return "{" + body + "}\n"; }

struct Outcome {
  Status status;
  std::vector<TraceRequest> requests;
};

Outcome Load(const std::string& format, const std::string& path) {
  auto src = format == "azure"      ? AzureLlmTrace(path)
             : format == "mooncake" ? MooncakeTrace(path)
                                    : AlibabaGenAiTrace(path);
  auto s = src->Open();
  if (!s.ok()) return {s.status(), {}};
  auto all = ReadAll(**s);
  if (!all.ok()) return {all.status(), {}};
  return {Status::Ok(), *all};
}

class TraceSilentTest : public fixtures::TempDirTest {
 protected:
  TraceSilentTest() : TempDirTest("aiscale_trace_silent") {}
};

TEST_F(TraceSilentTest, Table) {
  struct Case {
    std::string name, format, bytes;
    std::string want;                   // ":LINE: ..." after the path when an error; empty: ok
    std::vector<uint32_t> inputs = {};  // input tokens when ok
  };
  const std::vector<Case> cases = {
      // RFC 4180 quoting: the values land in the right columns.
      {"azure quoted comma",
       "azure",
       "TIMESTAMP,Note,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03,\"a, b\",5,1\n",
       "",
       {5}},
      {"azure doubled quote and newline",
       "azure",
       "TIMESTAMP,Note,ContextTokens,GeneratedTokens\n"
       "2023-11-16 18:17:03,\"say \"\"x\"\"\nmore, text\",5,1\n2023-11-16 18:17:04,n,6,1\n",
       "",
       {5, 6}},
      {"azure quoted number", "azure", kAzure + "2023-11-16 18:17:03,\"7\",1\n", "", {7}},
      {"azure quoted comma in a number", "azure", kAzure + "2023-11-16 18:17:03,\"1,200\",1\n",
       ":2: field ContextTokens: unparsable number '1,200'"},
      {"azure unclosed quote", "azure", kAzure + "2023-11-16 18:17:03,\"5,1\n",
       ":2: quoted field opened here is not closed"},
      {"azure stray quote", "azure", kAzure + "2023-11-16 18:17:03,5\",1\n",
       ":2: CSV column 2: a quote inside an unquoted field"},
      {"alibaba quoted comma",
       "alibaba",
       Gzip(kAli + "2024-11-15 16:57:50,\"x, y, z\",63,1,30\n"),
       "",
       {63}},
      // Duplicate header columns.
      {"azure duplicate column", "azure",
       "TIMESTAMP,ContextTokens,GeneratedTokens,ContextTokens\n2023-11-16 18:17:03,5,1,6\n",
       ":1: column ContextTokens appears twice in the header (columns 2 and 4)"},
      {"alibaba duplicate column", "alibaba",
       Gzip("gmt_create,prompt_length,num_images_per_prompt,num_inference_steps,gmt_create\n"),
       ":1: column gmt_create appears twice"},
      // Impossible dates.
      {"azure feb 31", "azure", kAzure + "2023-02-31 10:00:00,5,1\n",
       ":2: field TIMESTAMP: no such date or time '2023-02-31 10:00:00'"},
      {"azure hour 25", "azure", kAzure + "2023-02-01 25:00:00,5,1\n",
       ":2: field TIMESTAMP: no such date or time"},
      {"alibaba feb 29 common year", "alibaba", Gzip(kAli + "2023-02-29 10:00:00,n,5,1,30\n"),
       ":2: field gmt_create: no such date or time"},
      // Mooncake JSON lines.
      {"mooncake duplicate key", "mooncake",
       Gzip(Moon("\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, "
                 "\"input_length\": 9")),
       ":1: duplicate key 'input_length' in the object at top level"},
      {"mooncake fractional input", "mooncake",
       Gzip(Moon("\"timestamp\": 0, \"input_length\": 5.5, \"output_length\": 1")),
       ":1: field input_length: must be a whole number of tokens, got 5.5"},
      {"mooncake fractional output", "mooncake",
       Gzip(Moon("\"timestamp\": 0, \"input_length\": 5, \"output_length\": 0.25")),
       ":1: field output_length: must be a whole number of tokens"},
      {"mooncake whole float",
       "mooncake",
       Gzip(Moon("\"timestamp\": 0, \"input_length\": 5.0, \"output_length\": 1")),
       "",
       {5}},
      {"mooncake deep nesting", "mooncake",
       Gzip("{\"timestamp\": 0, \"x\": " + std::string(100000, '[') + "\n"),
       ":1: field x: unparsable value '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[...'"},
      {"mooncake valid but deep", "mooncake",
       Gzip(Moon("\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, \"x\": " +
                 std::string(100, '[') + std::string(100, ']'))),
       ":1: nested deeper than 64 levels"},
      // Rows appended after a gzip member.
      {"mooncake plain rows after gzip", "mooncake",
       Gzip(Moon("\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1")) +
           Moon("\"timestamp\": 1, \"input_length\": 5, \"output_length\": 1"),
       " after line 1: the data after the end of the gzip stream"},
      {"alibaba two gzip members",
       "alibaba",
       Gzip(kAli + "2024-11-15 16:57:50,n,5,1,30\n") + Gzip("2024-11-15 16:57:51,n,6,1,30\n"),
       "",
       {5, 6}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = Write(c.bytes);
    const Outcome o = Load(c.format, path);
    if (c.want.empty()) {
      ASSERT_TRUE(o.status.ok()) << o.status.message();
      std::vector<uint32_t> inputs;
      for (const auto& r : o.requests) inputs.push_back(r.input_tokens);
      EXPECT_EQ(inputs, c.inputs);
      continue;
    }
    ASSERT_FALSE(o.status.ok());
    EXPECT_NE(o.status.message().find(path + c.want), std::string::npos)
        << "want " << path + c.want << "\ngot  " << o.status.message();
  }
}

TEST_F(TraceSilentTest, SpecialFilesFailAtOnce) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string format : {"azure", "mooncake", "alibaba"}) {
    for (const std::string& path : {fifo, std::string("/dev/zero"), dir_.string()}) {
      SCOPED_TRACE(format + " " + path);
      const Outcome o = Load(format, path);
      ASSERT_FALSE(o.status.ok());
      EXPECT_NE(o.status.message().find("only regular files are read"), std::string::npos)
          << o.status.message();
    }
  }
  const auto r = LoadRateSeriesCsv(fifo);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unable to read rate series " + fifo + ": is a FIFO"),
            std::string::npos)
      << r.status().message();
}

TEST_F(TraceSilentTest, RateSeriesUsesTheSameTokenizer) {
  struct Case {
    std::string name, text, want;
    size_t points = 0;
  };
  const std::vector<Case> cases = {
      {"quoted", "t_s,\"note\",rate_per_s\n0,\"a, b\",1\n60,\"c \"\"d\"\"\",2\n", "", 2},
      {"quoted newline", "t_s,note,rate_per_s\n0,\"a\nb\",1\n60,c,2\n", "", 2},
      {"duplicate column", "t_s,rate_per_s,t_s\n0,1,0\n60,2,60\n",
       ":1: column t_s appears twice in the header (columns 1 and 3)"},
      {"stray quote", "t_s,rate_per_s\n0,1\"\n60,2\n", ":2: CSV column 2: a quote inside"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = Write(c.text);
    auto r = LoadRateSeriesCsv(path);
    if (c.want.empty()) {
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_EQ(r->size(), c.points);
      EXPECT_EQ(r->back().rate_per_s, 2);
      continue;
    }
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(path + c.want), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace aiscale::sim::traces
