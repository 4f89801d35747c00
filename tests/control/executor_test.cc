// Executors: InlineExecutor runs before Run returns; ThreadPoolExecutor runs every task on its
// workers, its destructor waits for the task running and drops the queued ones, and a Run
// after the stop began is dropped.
#include "control/executor.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

namespace aiscale::control {
namespace {

// A one-shot flag a test can wait on (30 s at most) from another thread.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [this] { return open_; });
  }
  bool is_open() {
    std::lock_guard<std::mutex> lock(mu_);
    return open_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(InlineExecutor, RunsTheTaskBeforeReturning) {
  InlineExecutor ex;
  int ran = 0;
  std::thread::id on;
  ex.Run([&] {
    ++ran;
    on = std::this_thread::get_id();
  });
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(on, std::this_thread::get_id());
}

TEST(ThreadPoolExecutor, RunsEveryTaskOnItsWorkers) {
  struct Case {
    const char* name;
    size_t threads;
    size_t want_threads;
  };
  const std::vector<Case> cases = {{"zero means one", 0, 1}, {"one", 1, 1}, {"three", 3, 3}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    constexpr int kTasks = 200;
    std::mutex mu;
    std::set<std::thread::id> workers;
    int done = 0;
    Gate all_done;
    {
      ThreadPoolExecutor ex(c.threads);
      EXPECT_EQ(ex.threads(), c.want_threads);
      for (int i = 0; i < kTasks; ++i) {
        ex.Run([&] {
          std::lock_guard<std::mutex> lock(mu);
          workers.insert(std::this_thread::get_id());
          if (++done == kTasks) all_done.Open();
        });
      }
      ASSERT_TRUE(all_done.Wait());
    }
    EXPECT_EQ(done, kTasks);
    EXPECT_LE(workers.size(), c.want_threads);
    EXPECT_EQ(workers.count(std::this_thread::get_id()), 0u);
  }
}

TEST(ThreadPoolExecutor, DestructorWaitsForTheRunningTask) {
  Gate started, release;
  std::atomic<bool> finished{false};
  auto ex = std::make_unique<ThreadPoolExecutor>(2);
  ex->Run([&] {
    started.Open();
    release.Wait();
    finished = true;
  });
  ASSERT_TRUE(started.Wait());
  std::atomic<bool> finished_when_destroyed{false};
  std::thread destroyer([&] {
    ex.reset();  // must not return before the task does
    finished_when_destroyed = finished.load();
  });
  release.Open();
  destroyer.join();
  EXPECT_TRUE(finished_when_destroyed);
}

TEST(ThreadPoolExecutor, QueuedTasksAndRunsAfterTheStopAreDropped) {
  Gate started, release;
  std::atomic<bool> queued_ran{false}, late_ran{false};
  auto ex = std::make_unique<ThreadPoolExecutor>(1);
  ThreadPoolExecutor* raw = ex.get();
  // The one worker is busy in this task while the destructor runs; when released, it asks the
  // stopping pool to run one more task.
  ex->Run([&, raw] {
    started.Open();
    release.Wait();
    raw->Run([&] { late_ran = true; });
  });
  ex->Run([&] { queued_ran = true; });  // waits in the queue behind the busy worker
  ASSERT_TRUE(started.Wait());
  std::thread destroyer([&] { ex.reset(); });
  // Give the destructor time to mark the pool stopping. Were the release to come first, the
  // queued task would run and the test would fail, never pass wrongly.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  release.Open();
  destroyer.join();
  EXPECT_FALSE(queued_ran);
  EXPECT_FALSE(late_ran);
}

}  // namespace
}  // namespace aiscale::control
