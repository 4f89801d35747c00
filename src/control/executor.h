// Executor: where the collector's fetches run.
//
// InlineExecutor runs each task before Run returns: the simulator and unit tests use it, so a
// collection is deterministic and the code path is the daemon's. ThreadPoolExecutor runs tasks
// on a fixed set of worker threads, so a slow or hung fetch never delays the caller; its
// destructor waits for running tasks and drops queued ones. Both are thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace aiscale::control {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual void Run(std::function<void()> task) = 0;
};

class InlineExecutor final : public Executor {
 public:
  void Run(std::function<void()> task) override { task(); }
};

class ThreadPoolExecutor final : public Executor {
 public:
  explicit ThreadPoolExecutor(size_t threads);
  ~ThreadPoolExecutor() override;
  void Run(std::function<void()> task) override;
  size_t threads() const { return workers_.size(); }

 private:
  void Work();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace aiscale::control
