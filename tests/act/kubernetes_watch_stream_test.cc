// The watch body decoder: events however the bytes were cut, and every way a stream can be
// wrong (malformed JSON, an unknown type, no object or version, too long), after which it stays
// failed; pending() tells a stream cut mid-event.
#include "act/kubernetes_watch_stream.h"

#include <gtest/gtest.h>

namespace aiscale::act {
namespace {

const std::string kAdded =
    R"({"type":"ADDED","object":{"kind":"AIScaler","metadata":{"name":"a","namespace":"ai","resourceVersion":"11"}}})";
const std::string kBookmark =
    R"({"type":"BOOKMARK","object":{"kind":"AIScaler","metadata":{"resourceVersion":"12"}}})";
const std::string kGone =
    R"j({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 5 (9)"}})j";

TEST(WatchStreamDecoder, EventsWhateverThePieces) {
  const std::string body = kAdded + "\n" + kBookmark + "\n\n" + kGone + "\n";
  for (size_t piece : {1u, 2u, 7u, 64u, 100000u}) {
    SCOPED_TRACE("pieces of " + std::to_string(piece));
    WatchStreamDecoder d(1 << 20);
    std::vector<WatchEvent> events;
    for (size_t i = 0; i < body.size(); i += piece) {
      ASSERT_TRUE(d.Feed(std::string_view(body).substr(i, piece), events).ok());
    }
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].type, WatchEventType::kAdded);
    EXPECT_EQ(events[0].resource_version, "11");
    EXPECT_EQ(events[0].object["metadata"]["name"], "a");
    EXPECT_EQ(events[1].type, WatchEventType::kBookmark);
    EXPECT_EQ(events[1].resource_version, "12");
    EXPECT_EQ(events[2].type, WatchEventType::kError);
    EXPECT_EQ(events[2].object["code"], 410);
    EXPECT_EQ(d.pending(), 0u);
  }
}

TEST(WatchStreamDecoder, CutMidEventIsPending) {
  WatchStreamDecoder d(1 << 20);
  std::vector<WatchEvent> events;
  ASSERT_TRUE(d.Feed(kAdded + "\n" + kBookmark.substr(0, 20), events).ok());
  EXPECT_EQ(events.size(), 1u);
  EXPECT_EQ(d.pending(), 20u);
}

TEST(WatchStreamDecoder, BadStreamsFailAndStayFailed) {
  struct Case {
    const char* name;
    std::string body;
    std::string want;  // a piece of the error
  };
  const std::vector<Case> cases = {
      {"malformed json", "{\"type\": \"ADDED\", \"object\": {not json\n", "not valid JSON"},
      {"array", "[1,2]\n", "not a JSON object"},
      {"unknown type",
       R"({"type":"CHANGED","object":{}})"
       "\n",
       "no known type"},
      {"no type",
       R"({"object":{}})"
       "\n",
       "no known type"},
      {"no object",
       R"({"type":"ADDED"})"
       "\n",
       "has no object"},
      {"object not a map",
       R"({"type":"ADDED","object":3})"
       "\n",
       "has no object"},
      {"no version",
       R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
       "\n",
       "no metadata.resourceVersion"},
      {"no name",
       R"({"type":"DELETED","object":{"metadata":{"resourceVersion":"3"}}})"
       "\n",
       "no metadata.name"},
      {"duplicate key",
       R"({"type":"ADDED","type":"DELETED","object":{}})"
       "\n",
       "duplicate key"},
      {"too long", "{\"type\":\"ADDED\",\"object\":{\"x\":\"" + std::string(2000, 'x') + "\"}}\n",
       "longer than 1024 bytes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    WatchStreamDecoder d(1024);
    std::vector<WatchEvent> events;
    const Status st = d.Feed(c.body, events);
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(st.IsInvalid());
    EXPECT_NE(st.message().find(c.want), std::string::npos) << st.message();
    EXPECT_TRUE(events.empty());
    // A good event after a bad one is not read: the watcher re-lists instead.
    EXPECT_FALSE(d.Feed(kAdded + "\n", events).ok());
    EXPECT_TRUE(events.empty());
  }
}

TEST(WatchStreamDecoder, OverLongEventFailsBeforeItsEnd) {
  WatchStreamDecoder d(100);
  std::vector<WatchEvent> events;
  EXPECT_TRUE(d.Feed(std::string(60, 'x'), events).ok());
  EXPECT_FALSE(d.Feed(std::string(60, 'x'), events).ok()) << "no newline needed to fail";
}

}  // namespace
}  // namespace aiscale::act
