// JsonPull (core/json_pull.h): what it reads, and that it refuses, rather than misreads, what is
// not strict JSON; nlohmann's own parser is the reference for every refusal.
#include "core/json_pull.h"

#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace aiscale {
namespace {

TEST(JsonPull, StringsWithEveryEscape) {
  struct Case {
    std::string text;
    bool ok;
    std::string want;
  };
  const std::vector<Case> cases = {
      {R"("plain")", true, "plain"},
      {R"("q\" b\\ s\/ \b\f\n\r\t")", true, "q\" b\\ s/ \b\f\n\r\t"},
      {R"("\u0041\u00e9\u2603")", true, "A\xC3\xA9\xE2\x98\x83"},
      {R"("\ud83d\ude80")", true, "\xF0\x9F\x9A\x80"},  // a surrogate pair
      {"\"caf\xC3\xA9\"", true, "caf\xC3\xA9"},
      {R"("\ud83d")", false, ""},        // a high surrogate alone
      {R"("\ude80")", false, ""},        // a low surrogate alone
      {R"("\x")", false, ""},            // no such escape
      {R"("\u12")", false, ""},          // short
      {"\"tab\there\"", false, ""},      // a raw control character
      {"\"bad \xFF byte\"", false, ""},  // not UTF-8
      {"\"over \xC0\x80 long\"", false, ""},
      {R"("open)", false, ""},
      {"3", false, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    JsonPull r(c.text);
    std::string out;
    EXPECT_EQ(r.String(out), c.ok);
    if (c.ok) {
      EXPECT_EQ(out, c.want);
    }
    if (c.text[0] == '"') {
      EXPECT_EQ(nlohmann::json::accept(c.text), c.ok) << "the reference disagrees";
    }
  }
}

TEST(JsonPull, NumbersAsTheGrammarWritesThem) {
  struct Case {
    std::string text;
    bool is_int;     // Int takes it
    bool is_number;  // NumberOrNull takes it
    double value;
  };
  const std::vector<Case> cases = {
      {"0", true, true, 0},
      {"-12", true, true, -12},
      {"2.5", false, true, 2.5},
      {"-1e-3", false, true, -1e-3},
      {"5E+2", false, true, 500},
      {"9223372036854775807", true, true, 9223372036854775807.0},
      {"01", false, false, 0},
      {"+1", false, false, 0},
      {".5", false, false, 0},
      {"1.", false, false, 0},
      {"1e", false, false, 0},
      {"-", false, false, 0},
      {"1e400", false, false, 0},  // past double: the full parser decides
      {"9223372036854775808", false, true, 9223372036854775808.0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    int64_t i = 0;
    JsonPull a(c.text);
    EXPECT_EQ(a.Int(i) && a.AtEnd(), c.is_int);
    double d = 0;
    JsonPull b(c.text);
    EXPECT_EQ(b.NumberOrNull(d) && b.AtEnd(), c.is_number);
    if (c.is_number) {
      EXPECT_EQ(d, c.value);
    }
  }
  double d = 0;
  JsonPull n(" null ");
  ASSERT_TRUE(n.NumberOrNull(d));
  EXPECT_TRUE(std::isnan(d));
  EXPECT_TRUE(n.AtEnd());
}

TEST(JsonPull, SkipsAnyValueAndStopsAtBadOnes) {
  for (const char* good : {"[]", "{}", "[1,[2,{\"a\":null}],\"x\",true,false]",
                           " { \"k\" : [ -0.5e1 , \"\\u00e9\" ] } "}) {
    SCOPED_TRACE(good);
    JsonPull r(good);
    EXPECT_TRUE(r.Skip() && r.AtEnd());
  }
  std::string deep(100, '[');
  deep += std::string(100, ']');
  for (const std::string& bad :
       std::vector<std::string>{"[1,]", "{\"a\"}", "{1:2}", "[1 2]", "tru", "nul", "[", deep}) {
    SCOPED_TRACE(bad);
    JsonPull r(bad);
    EXPECT_FALSE(r.Skip() && r.AtEnd());
  }
}

}  // namespace
}  // namespace aiscale
