// LineReader: plain and gzip input, bounded (regular files only, a line limit, a decompressed
// limit), and never silently dropping data: several gzip members are read as one stream, and
// anything after the last member that is not gzip is an error, not ignored as zlib would.
#include "sim/traces/line_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/fixtures.h"

namespace aiscale::sim::traces {
namespace {

using fixtures::Gzip;

class LineReaderTest : public fixtures::TempDirTest {
 protected:
  LineReaderTest() : TempDirTest("aiscale_line_reader") {}
  // All lines, then the status.
  static std::pair<std::vector<std::string>, Status> ReadLines(const std::string& path,
                                                               const FileLimit& limit) {
    LineReader r;
    std::vector<std::string> lines;
    if (Status s = r.Open(path, limit); !s.ok()) return {lines, s};
    for (std::string l; r.Next(l);) lines.push_back(l);
    return {lines, r.status()};
  }
};

TEST_F(LineReaderTest, Table) {
  const std::string big_line(kMaxLineBytes + 1, 'x');
  struct Case {
    std::string name, bytes;
    std::vector<std::string> lines;
    std::string error;  // substring of the status; empty: ok
    FileLimit limit = kTraceFileLimit;
  };
  const std::vector<Case> cases = {
      {"plain", "a\nb\r\nc", {"a", "b", "c"}, ""},
      {"gzip", Gzip("a\nb\n"), {"a", "b"}, ""},
      {"byte-order mark",
       "\xEF\xBB\xBF"
       "a,b\n\xEF\xBB\xBF\n",
       {"a,b", "\xEF\xBB\xBF"},
       ""},
      {"two gzip members", Gzip("a\n") + Gzip("b\n"), {"a", "b"}, ""},
      {"empty gzip member", Gzip("") + Gzip("a\n"), {"a"}, ""},
      {"plain rows after gzip",
       Gzip("a\nb\n") + "c\nd\n",
       {"a", "b"},
       "after line 2: the data after the end of the gzip stream (at byte"},
      {"one stray byte after gzip", Gzip("a\n") + "\n", {"a"}, "is not gzip"},
      {"truncated gzip",
       Gzip(std::string(5000, 'y') + "\n").substr(0, 20),
       {},
       "unexpected end of file"},
      {"not gzip data after the magic", std::string("\x1f\x8b") + "garbage", {}, "bad gzip data"},
      {"line too long", "ok\n" + big_line + "\n", {"ok"}, "after line 1: the next line is longer"},
      {"line at the limit", std::string(kMaxLineBytes, 'z'), {std::string(kMaxLineBytes, 'z')}, ""},
      {"decompressed limit",
       Gzip(std::string(300, 'q') + "\n"),
       {},
       "more than 200 bytes of data (decompressed)",
       FileLimit{"trace", 1 << 20, 200}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = Write(c.bytes);
    auto [lines, status] = ReadLines(path, c.limit);
    EXPECT_EQ(lines, c.lines);
    if (c.error.empty()) {
      EXPECT_TRUE(status.ok()) << status.message();
    } else {
      ASSERT_FALSE(status.ok());
      EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
      EXPECT_NE(status.message().find(c.error), std::string::npos) << status.message();
    }
  }
}

TEST_F(LineReaderTest, SpecialFilesAreRefusedAtOpen) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = Write("header\n");
  ::truncate(big.c_str(), 2 << 20);  // sparse: 2 MiB on paper
  struct Case {
    std::string name, path, want;
    FileLimit limit = kTraceFileLimit;
  };
  const std::vector<Case> cases = {
      {"fifo", fifo, "is a FIFO"},
      {"/dev/zero", "/dev/zero", "is a character device"},
      {"directory", dir_.string(), "is a directory"},
      {"over the file limit", big, "over the limit of 1 MiB", FileLimit{"trace", 1 << 20, 0}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    LineReader r;
    const Status s = r.Open(c.path, c.limit);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("unable to read trace " + c.path), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.want), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace aiscale::sim::traces
