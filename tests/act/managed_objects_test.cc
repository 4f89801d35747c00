// ManagedObjects (act/managed_objects.h): unknown until an awaited watch reports, the version
// moves exactly when the set does, and readers on other threads see whole sets.
#include "act/managed_objects.h"

#include <thread>

#include <gtest/gtest.h>

namespace aiscale::act {
namespace {

std::vector<std::string> Names(const std::vector<EngineObject>& v) {
  std::vector<std::string> out;
  for (const auto& o : v) out.push_back(o.namespace_ + "/" + o.kind + "/" + o.name);
  return out;
}

TEST(ManagedObjects, UnknownUntilTheWatchReportsThenVersionedBySet) {
  const std::vector<EngineObject> fixed = {{"ai", "Deployment", "file"}};
  ManagedObjects none(fixed, /*awaits_watch=*/false);
  ASSERT_TRUE(none.Read().ok());
  EXPECT_EQ(Names(none.Read()->objects), std::vector<std::string>{"ai/Deployment/file"});

  ManagedObjects m(fixed, /*awaits_watch=*/true);
  ASSERT_FALSE(m.Read().ok());
  EXPECT_NE(m.Read().status().message().find("not listed yet"), std::string::npos);
  struct Step {
    const char* what;
    std::vector<EngineObject> watched;
    bool moves;
  };
  const std::vector<Step> steps = {
      {"first report, even empty", {}, true},
      {"the same empty set", {}, false},
      {"an object", {{"ai", "Deployment", "llm"}}, true},
      {"two, any order", {{"ai", "StatefulSet", "kv"}, {"ai", "Deployment", "llm"}}, true},
      {"the same two reordered", {{"ai", "Deployment", "llm"}, {"ai", "StatefulSet", "kv"}}, false},
      {"one renamed", {{"ai", "Deployment", "llm2"}, {"ai", "StatefulSet", "kv"}}, true},
      {"another namespace", {{"ml", "Deployment", "llm2"}, {"ai", "StatefulSet", "kv"}}, true},
  };
  for (const Step& s : steps) {
    SCOPED_TRACE(s.what);
    const uint64_t before = m.version();
    m.SetWatched(s.watched);
    EXPECT_EQ(m.version() != before, s.moves);
    Result<ManagedObjects::View> v = m.Read();
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->version, m.version());
    ASSERT_EQ(v->objects.size(), 1 + s.watched.size());
    EXPECT_EQ(v->objects[0].name, "file");
  }
}

TEST(ManagedObjects, ReadersSeeWholeSets) {
  ManagedObjects m({}, true);
  std::thread writer([&] {
    for (int i = 0; i < 2000; ++i) {
      std::vector<EngineObject> set(static_cast<size_t>(i % 5 + 1), {"ai", "Deployment", "x"});
      m.SetWatched(set);
    }
  });
  for (int i = 0; i < 2000; ++i) {
    Result<ManagedObjects::View> v = m.Read();
    if (!v.ok()) continue;
    for (const auto& o : v->objects) ASSERT_EQ(o.name, "x");
  }
  writer.join();
  EXPECT_EQ(m.Read()->objects.size(), 1999 % 5 + 1u);
}

}  // namespace
}  // namespace aiscale::act
