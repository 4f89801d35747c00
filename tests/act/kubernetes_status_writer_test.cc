// StatusWriter against the wire-level FakeKubeApiServer (a fake: Debian ships no
// kube-apiserver): what is written (coalesced, one PUT of /status per object with a change),
// optimistic concurrency (409 -> one re-read and write; a second 409 leaves it queued), a
// deleted object dropped, nothing written by a follower, Events, and the write rate.
#include "act/kubernetes_status_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "core/curl_http_client.h"
#include "core/system_clock.h"
#include "fakes/fake_kube_apiserver.h"
#include "fakes/widget_crd.h"

namespace aiscale::act {
namespace {

using nlohmann::json;
using testing::FakeKubeApiServer;

class StatusWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start());
    ASSERT_TRUE(server_.AddCrd(testing::WidgetCrd()));
    for (const char* n : {"a", "b", "c"}) {
      ASSERT_EQ(server_.CreateCustom(testing::Widget("ai", n, 1)).first, 201);
    }
    KubeEndpoint ep;
    ep.server = server_.Url();
    ep.token = "fake-token";
    client_ = std::make_unique<KubeClient>(ep, http_, clock_, KubeClientOptions{});
    options_.api_prefix = "/apis/example.com/v1";
    options_.plural = "widgets";
    options_.api_version = "example.com/v1";
    options_.kind = "Widget";
    options_.qps = 1000;
    options_.retry_after = Seconds(0);
  }
  std::unique_ptr<StatusWriter> Make() {
    return std::make_unique<StatusWriter>(
        *client_, clock_, options_, [this] { return leader_.load(); },
        [this](const std::string& l) { log_ += l + "\n"; });
  }
  // PUTs of /status, and GETs of one object, since the last ClearRequests.
  std::pair<int, int> Calls() {
    int puts = 0, gets = 0;
    for (const auto& r : server_.Requests()) {
      puts += r.method == "PUT" && r.subresource == "status" ? 1 : 0;
      gets += r.verb == "get" ? 1 : 0;
    }
    return {puts, gets};
  }
  json StatusOf(const std::string& name) {
    return server_.Object("example.com", "widgets", "ai", name).value("status", json());
  }
  std::string Version(const std::string& name) {
    return server_.Object("example.com", "widgets", "ai", name)["metadata"]["resourceVersion"];
  }

  FakeKubeApiServer server_;
  CurlHttpClient http_;
  SystemClock clock_;
  std::unique_ptr<KubeClient> client_;
  StatusWriterOptions options_;
  std::atomic<bool> leader_{true};
  std::string log_;
};

TEST_F(StatusWriterTest, WritesEachChangedObjectOnceWithItsLatestStatus) {
  auto w = Make();
  w->SetVersion("ai/a", Version("a"));
  w->SetVersion("ai/b", Version("b"));
  for (int i = 1; i <= 3; ++i) w->Queue("ai/a", {{"currentReplicas", i}});
  w->Queue("ai/b", {{"currentReplicas", 9}});
  server_.ClearRequests();
  EXPECT_EQ(w->WriteQueued(), 2);
  EXPECT_EQ(Calls().first, 2) << "writes are bounded by the objects whose status changed";
  EXPECT_EQ(StatusOf("a")["currentReplicas"], 3);
  EXPECT_EQ(StatusOf("b")["currentReplicas"], 9);
  EXPECT_TRUE(StatusOf("c").is_null());
  server_.ClearRequests();
  EXPECT_EQ(w->WriteQueued(), 0);
  EXPECT_EQ(Calls().first, 0) << "nothing queued, nothing written";
}

TEST_F(StatusWriterTest, ConflictRereadsOnceAndWrites) {
  auto w = Make();
  w->SetVersion("ai/a", "1");  // stale: someone wrote the object since
  w->Queue("ai/a", {{"currentReplicas", 4}});
  server_.ClearRequests();
  EXPECT_EQ(w->WriteQueued(), 1);
  EXPECT_EQ(Calls(), std::make_pair(2, 1));
  EXPECT_EQ(StatusOf("a")["currentReplicas"], 4);
  // The version it wrote is remembered: the next write needs no re-read.
  w->Queue("ai/a", {{"currentReplicas", 5}});
  server_.ClearRequests();
  EXPECT_EQ(w->WriteQueued(), 1);
  EXPECT_EQ(Calls(), std::make_pair(1, 0));
}

TEST_F(StatusWriterTest, SecondConflictLeavesItQueued) {
  auto w = Make();
  w->SetVersion("ai/a", Version("a"));
  w->Queue("ai/a", {{"currentReplicas", 4}});
  FakeKubeApiServer::Fault conflict;
  conflict.status = 409;
  conflict.count = 2;
  server_.InjectFault("PUT", "/apis/example.com/v1/namespaces/ai/widgets/a/status", conflict);
  EXPECT_EQ(w->WriteQueued(), 0);
  EXPECT_EQ(w->queued(), 1u);
  EXPECT_NE(log_.find("unable to write the status of AIScaler ai/a"), std::string::npos) << log_;
  EXPECT_EQ(w->WriteQueued(), 1) << "written on the next round";
  EXPECT_EQ(StatusOf("a")["currentReplicas"], 4);
}

TEST_F(StatusWriterTest, DeletedObjectIsDropped) {
  auto w = Make();
  w->Queue("ai/c", {{"currentReplicas", 1}});
  ASSERT_EQ(server_.DeleteCustom("example.com", "widgets", "ai", "c").first, 200);
  EXPECT_EQ(w->WriteQueued(), 0);
  EXPECT_EQ(w->queued(), 0u);
  EXPECT_EQ(log_, "") << "a gone object is not a problem";
}

TEST_F(StatusWriterTest, FollowerWritesNothingUntilItLeads) {
  auto w = Make();
  leader_ = false;
  w->Queue("ai/a", {{"currentReplicas", 2}});
  w->QueueEvent("ai/a", "", "Warning", "InvalidSpec", "spec.x: bad");
  server_.ClearRequests();
  EXPECT_EQ(w->WriteQueued(), 0);
  EXPECT_TRUE(server_.Requests().empty());
  leader_ = true;
  EXPECT_EQ(w->WriteQueued(), 1);
  ASSERT_EQ(server_.Events().size(), 1u);
  const json e = server_.Events()[0];
  EXPECT_EQ(e["reason"], "InvalidSpec");
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["involvedObject"]["kind"], "Widget");
  EXPECT_EQ(e["involvedObject"]["name"], "a");
}

TEST_F(StatusWriterTest, KeepsToTheRate) {
  options_.qps = 10;
  auto w = Make();
  const auto t0 = std::chrono::steady_clock::now();
  for (int round = 0; round < 8; ++round) {
    for (const char* n : {"a", "b", "c"}) w->Queue(std::string("ai/") + n, {{"round", round}});
    EXPECT_EQ(w->WriteQueued(), 3);
  }
  // 24 writes at 10/s after a burst of 10: at least 1.4 s (a slow machine only adds to it).
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.3);
}

}  // namespace
}  // namespace aiscale::act
