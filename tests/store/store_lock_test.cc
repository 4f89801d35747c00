// StoreLock: one daemon per store (issue 27 §6: two daemons on one store both ran and a
// workload sized 3 ended up with 6 replicas).
#include "store/store_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "store/store_test_util.h"

namespace aiscale::store {
namespace {

using aiscale::testing::FreshTempDir;

TEST(StoreLock, ASecondHolderIsRefusedWithTheFirstsPid) {
  const std::string store = FreshTempDir("lock") + "/store.db";
  auto first = StoreLock::Acquire(store);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ((*first)->path(), store + ".lock");
  std::ifstream pid_file(store + ".lock");
  std::string pid;
  pid_file >> pid;
  EXPECT_EQ(pid, std::to_string(getpid()));
  // flock is per open file description: a second Acquire in this process is refused as a
  // second daemon's would be.
  auto second = StoreLock::Acquire(store);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(second.status().IsConflict()) << second.status().message();
  EXPECT_NE(second.status().message().find("in use by another aiscale (pid " + pid + ","),
            std::string::npos)
      << second.status().message();
  first->reset();  // released: the next one takes it
  EXPECT_TRUE(StoreLock::Acquire(store).ok());
}

// The kernel drops the lock when its holder dies, kill -9 included: no stale lock to clean up.
TEST(StoreLock, AHolderKilledLeavesTheStoreFree) {
  const std::string store = FreshTempDir("lock") + "/store.db";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = StoreLock::Acquire(store);
    const char c = held.ok() ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(2);
    pause();
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  EXPECT_FALSE(StoreLock::Acquire(store).ok());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(StoreLock::Acquire(store).ok());
  close(ready[0]);
  close(ready[1]);
}

TEST(StoreLock, AnUnwritableLocationSaysWhy) {
  auto lock = StoreLock::Acquire("/proc/no-such-dir/store.db");
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.status().message().find("cannot open /proc/no-such-dir/store.db.lock"),
            std::string::npos)
      << lock.status().message();
}

}  // namespace
}  // namespace aiscale::store
