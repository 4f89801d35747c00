// The one CSV tokenizer (RFC 4180) and the strict field parsers every CSV loader shares:
// quoted commas, doubled quotes and newlines parse; stray quotes, duplicate header columns and
// impossible dates are errors naming the line.
#include "sim/traces/csv_fields.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/traces/line_reader.h"

namespace aiscale::sim::traces {
namespace {

TEST(CsvFields, SplitFollowsRfc4180) {
  struct Case {
    std::string name, record;
    std::vector<std::string> want;
    std::string error;  // substring; empty: no error
  };
  const std::vector<Case> cases = {
      {"plain", "a,b,c", {"a", "b", "c"}, ""},
      {"empty fields", ",,", {"", "", ""}, ""},
      {"trailing comma", "a,", {"a", ""}, ""},
      {"quoted comma", "1,\"x, y\",3", {"1", "x, y", "3"}, ""},
      {"doubled quote", "\"say \"\"hi\"\"\",2", {"say \"hi\"", "2"}, ""},
      {"quoted newline", "\"two\nlines\",2", {"two\nlines", "2"}, ""},
      {"empty quoted", "\"\",2", {"", "2"}, ""},
      {"spaces around quotes", " \"a,b\" ,2", {"a,b", "2"}, ""},
      {"unclosed quote", "\"abc,2", {}, "f:3: CSV column 1: quoted field is not closed"},
      {"text after quote", "\"a\"b,2", {}, "CSV column 1: text after the closing quote"},
      {"stray quote", "1,a\"b", {}, "CSV column 2: a quote inside an unquoted field"},
  };
  std::vector<std::string> out = {"stale", "stale", "stale", "stale", "stale"};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Status s = SplitCsv(c.record, out, "f:3");
    if (!c.error.empty()) {
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.message().find(c.error), std::string::npos) << s.message();
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(out, c.want);
  }
}

TEST(CsvFields, HeaderColumns) {
  struct Case {
    std::string name, header, error;
    std::vector<size_t> want;
  };
  const std::vector<Case> cases = {
      {"found", "t,a,b", "", {1, 2}},
      {"quoted names", "\"t\",\"a\",b", "", {1, 2}},
      {"missing", "t,a", "field b: missing column", {}},
      {"duplicate wanted", "t,a,b,a", "column a appears twice in the header (columns 2 and 4)", {}},
      {"duplicate other", "x,a,b,x", "column x appears twice in the header (columns 1 and 4)", {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = FindColumns(c.header, {"a", "b"}, "f:1");
    if (!c.error.empty()) {
      ASSERT_FALSE(r.ok());
      EXPECT_NE(r.status().message().find("f:1: "), std::string::npos);
      EXPECT_NE(r.status().message().find(c.error), std::string::npos) << r.status().message();
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(*r, c.want);
  }
}

TEST(CsvFields, ImpossibleDatesAreErrors) {
  struct Case {
    std::string text;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"2023-02-28 10:00:00", true},  {"2023-02-29 10:00:00", false},
      {"2024-02-29 10:00:00", true},  {"1900-02-29 10:00:00", false},
      {"2000-02-29 10:00:00", true},  {"2023-02-31 10:00:00", false},
      {"2023-04-31 10:00:00", false}, {"2023-12-31 23:59:59", true},
      {"2023-01-10 25:00:00", false}, {"2023-01-10 24:00:00", false},
      {"2023-01-10 10:60:00", false}, {"2023-01-10 10:00:60", false},
      {"2016-12-31 23:59:60", true},  {"2023-13-01 10:00:00", false},
      {"2023-00-10 10:00:00", false}, {"2023-01-00 10:00:00", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto r = ParseDateTimeNs(c.text, "TIMESTAMP", "f:7");
    EXPECT_EQ(r.ok(), c.ok) << (r.ok() ? "" : r.status().message());
    if (!c.ok) {
      EXPECT_EQ(r.status().message().rfind("f:7: field TIMESTAMP: ", 0), 0u)
          << r.status().message();
    }
  }
  // The leap second is the next day's first second, not a roll-over of something else.
  EXPECT_EQ(*ParseDateTimeNs("2016-12-31 23:59:60", "t", "w"),
            *ParseDateTimeNs("2017-01-01 00:00:00", "t", "w"));
}

TEST(CsvFields, RecordsSpanLinesInsideQuotes) {
  const auto path = (std::filesystem::path(::testing::TempDir()) /
                     ("aiscale_csv_records_" + std::to_string(::getpid()) + ".csv"))
                        .string();
  struct Case {
    std::string name, text;
    std::vector<std::string> records;  // with their "FILE:LINE" suffix, ":LINE|record"
    std::string error;
  };
  const std::vector<Case> cases = {
      {"one line each", "a,b\n1,2\n", {":1|a,b", ":2|1,2"}, ""},
      {"blank lines skipped", "a,b\n\n1,2\n", {":1|a,b", ":3|1,2"}, ""},
      {"quoted newline joins", "a,\"x\ny\"\n1,2\n", {":1|a,\"x\ny\"", ":3|1,2"}, ""},
      {"stray quote does not join lines",
       "a,b\n1,2\"\n3,4\n",
       {":1|a,b", ":2|1,2\"", ":3|3,4"},
       ""},
      {"doubled quote stays open", "a,\"x\"\"\ny\"\n", {":1|a,\"x\"\"\ny\""}, ""},
      {"quote open at end", "a,b\n1,\"x\n2,3\n", {":1|a,b"}, ":2: quoted field opened here"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::ofstream(path, std::ios::binary) << c.text;
    LineReader r;
    ASSERT_TRUE(r.Open(path).ok());
    std::string record, where;
    Status s;
    std::vector<std::string> got;
    while (NextCsvRecord(r, record, where, s))
      got.push_back(where.substr(path.size()) + "|" + record);
    EXPECT_EQ(got, c.records);
    if (c.error.empty()) {
      EXPECT_TRUE(s.ok()) << s.message();
    } else {
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.message().find(path + c.error), std::string::npos) << s.message();
    }
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace aiscale::sim::traces
