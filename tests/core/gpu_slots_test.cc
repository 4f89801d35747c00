// GpuSlots (core/gpu_slots.h): all-or-nothing takes, preferred slots, releases that cannot free
// another holder's slot, and no slot held twice under concurrent takes and releases.
#include "core/gpu_slots.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace aiscale {
namespace {

TEST(GpuSlots, AcquireCases) {
  struct Case {
    const char* name;
    int count;
    std::vector<std::pair<std::string, int>> before;  // holders that take first, in order
    std::string holder;
    int n;
    std::vector<int> preferred;
    std::optional<std::vector<int>> want;
  };
  const std::vector<Case> cases = {
      {"lowest ids first", 4, {}, "a-0", 2, {}, std::vector<int>{0, 1}},
      {"after others", 4, {{"b-0", 1}}, "a-0", 2, {}, std::vector<int>{1, 2}},
      {"exactly the rest", 4, {{"b-0", 3}}, "a-0", 1, {}, std::vector<int>{3}},
      {"too few free: nothing", 4, {{"b-0", 3}}, "a-0", 2, {}, std::nullopt},
      {"more than the table", 2, {}, "a-0", 3, {}, std::nullopt},
      {"preferred when free", 4, {}, "a-0", 2, {3, 2}, std::vector<int>{2, 3}},
      {"preferred taken: others", 4, {{"b-0", 1}}, "a-0", 1, {0}, std::vector<int>{1}},
      {"preferred out of range ignored", 2, {}, "a-0", 1, {7, -1}, std::vector<int>{0}},
      {"zero asked", 4, {}, "a-0", 0, {}, std::nullopt},
      {"negative asked", 4, {}, "a-0", -1, {}, std::nullopt},
      {"no holder name", 4, {}, "", 1, {}, std::nullopt},
      {"negative count is empty", -3, {}, "a-0", 1, {}, std::nullopt},
  };
  for (const Case& c : cases) {
    GpuSlots slots(c.count);
    for (const auto& [h, n] : c.before) ASSERT_TRUE(slots.Acquire(h, n)) << c.name;
    const int free_before = slots.Free();
    EXPECT_EQ(slots.Acquire(c.holder, c.n, c.preferred), c.want) << c.name;
    const int taken = c.want ? static_cast<int>(c.want->size()) : 0;
    EXPECT_EQ(slots.Free(), free_before - taken) << c.name;  // a refusal takes nothing
  }
}

TEST(GpuSlots, ReleaseFreesOnlyTheHoldersOwnSlots) {
  GpuSlots slots(4);
  ASSERT_EQ(slots.Acquire("a-0", 2), (std::vector<int>{0, 1}));
  ASSERT_EQ(slots.Acquire("b-0", 1), (std::vector<int>{2}));
  EXPECT_EQ(slots.Release("a-0", {2}), 0);  // b-0's slot stays b-0's
  EXPECT_EQ(slots.Release("", {0}), 0);
  EXPECT_EQ(slots.Release("a-0", {0, 1, 3, 9, -1}), 2);
  EXPECT_EQ(slots.Release("a-0", {0, 1}), 0);  // a second release does nothing
  EXPECT_EQ(slots.Holders(), (std::vector<std::string>{"", "", "b-0", ""}));
  EXPECT_EQ(slots.Free(), 3);
}

TEST(GpuSlots, DescribeNamesTheHolders) {
  GpuSlots slots(4);
  EXPECT_EQ(slots.Describe(), "4 of 4 GPU slots free");
  slots.Acquire("chat-0", 2);
  slots.Acquire("bert-1", 1, {3});
  EXPECT_EQ(slots.Describe(), "1 of 4 GPU slots free (held: 0 chat-0, 1 chat-0, 3 bert-1)");
  GpuSlots many(20);
  many.Acquire("x-0", 20);
  EXPECT_NE(many.Describe().find("15 x-0, and 4 more"), std::string::npos) << many.Describe();
}

TEST(GpuSlots, FormatSlotIds) {
  EXPECT_EQ(FormatSlotIds({}), "");
  EXPECT_EQ(FormatSlotIds({3}), "3");
  EXPECT_EQ(FormatSlotIds({0, 1, 7}), "0,1,7");
}

// Eight threads take and give back slots as fast as they can; each checks, while it holds its
// slots, that the table names it for each of them (a slot handed out twice would name the
// other taker), and at the end every slot is free.
TEST(GpuSlots, ConcurrentTakesNeverShareASlot) {
  GpuSlots slots(5);
  std::atomic<int> overlaps{0};
  std::atomic<int> takes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::string me = "w-" + std::to_string(t);
      for (int i = 0; i < 2000; ++i) {
        std::optional<std::vector<int>> got = slots.Acquire(me, 1 + (i + t) % 2);
        if (!got) continue;
        ++takes;
        const std::vector<std::string> holders = slots.Holders();
        for (int id : *got) overlaps += holders[static_cast<size_t>(id)] != me;
        if (slots.Release(me, *got) != static_cast<int>(got->size())) ++overlaps;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GT(takes.load(), 0);
  EXPECT_EQ(slots.Free(), 5);
}

}  // namespace
}  // namespace aiscale
