// The pure parts of the API: wall-time text, limit parsing, name resolution, error bodies.
#include "server/json_views.h"

#include <gtest/gtest.h>

#include "server/api_handlers.h"
#include "server/fake_live_view.h"

namespace aiscale::server {
namespace {

TEST(JsonViews, FormatWallTime) {
  struct Case {
    const char* name;
    WallTime t;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"unset is empty", WallTime{}, ""},
      {"whole second", WallTime(Seconds(1'790'000'000)), "2026-09-21T14:13:20.000Z"},
      {"millis truncated", WallTime(Seconds(1'790'000'000) + Duration(123'999'999)),
       "2026-09-21T14:13:20.123Z"},
      {"leap day", WallTime(Seconds(1'709'164'800)), "2024-02-29T00:00:00.000Z"},
      {"before 1970", WallTime(Seconds(-1.5)), "1969-12-31T23:59:58.500Z"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(FormatWallTime(c.t), c.text);
  }
}

TEST(JsonViews, ParseLimit) {
  struct Case {
    const char* name;
    std::optional<std::string> raw;
    size_t want;  // 0: invalid
  };
  const std::vector<Case> cases = {
      {"absent", std::nullopt, 20},
      {"one", "1", 1},
      {"max", "1000", 1000},
      {"zero", "0", 0},
      {"over max", "1001", 0},
      {"negative", "-5", 0},
      {"empty", "", 0},
      {"letters", "ten", 0},
      {"space", " 5", 0},
      {"huge", "123456789012345678901234567890", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto n = ParseLimit(c.raw);
    if (c.want == 0) {
      EXPECT_TRUE(n.status().IsInvalid());
      EXPECT_NE(n.status().message().find("1..1000"), std::string::npos);
    } else {
      ASSERT_TRUE(n.ok()) << n.status().message();
      EXPECT_EQ(*n, c.want);
    }
  }
}

TEST(JsonViews, ResolveWorkload) {
  testing::FakeLiveView view;
  view.Set({testing::ApiWorkload("a", "x", 1), testing::ApiWorkload("b", "x", 1),
            testing::ApiWorkload("a", "y", 1), testing::ApiWorkload("", "z", 1)});
  struct Case {
    const char* name;
    std::string query;
    std::string key;  // empty: error
    StatusCode code;
  };
  const std::vector<Case> cases = {
      {"key", "a/x", "a/x", StatusCode::kOk},
      {"unique name", "y", "a/y", StatusCode::kOk},
      {"no namespace", "z", "z", StatusCode::kOk},
      {"ambiguous", "x", "", StatusCode::kInvalid},
      {"unknown", "w", "", StatusCode::kNotFound},
      {"unknown key", "c/x", "", StatusCode::kNotFound},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto w = ResolveWorkload(view, c.query);
    EXPECT_EQ(w.status().code(), c.code) << w.status().message();
    if (w.ok()) {
      EXPECT_EQ(w->ref.Key(), c.key);
    }
  }
}

TEST(JsonViews, ErrorBodyAndInvalidUtf8) {
  EXPECT_EQ(Dump(ErrorJson(404, "unknown workload 'x'")),
            R"({"error":{"code":404,"message":"unknown workload 'x'","reason":"NotFound"}})");
  // A detail from a broken exporter must not make the API throw.
  SignalView s;
  s.name = "gpu_util";
  s.detail = "bad \xff byte";
  EXPECT_NE(Dump(SignalJson(s)).find("bad \xef\xbf\xbd byte"), std::string::npos);
}

}  // namespace
}  // namespace aiscale::server
