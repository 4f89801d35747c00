// ReadBoundedFile / CheckRegularFile: every special file is refused at once (never opened when
// it is a FIFO), and size limits hold on disk and while reading.
#include "core/bounded_file.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace aiscale {
namespace {

namespace fs = std::filesystem;

class BoundedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("aiscale_bounded_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  fs::path dir_;
};

TEST_F(BoundedFileTest, SpecialFilesAreRefusedWithTheirKind) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A listening unix socket: a socket file on disk.
  const std::string sock = (dir_ / "sock").string();
  const int sfd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock.c_str());
  const bool have_sock = sock.size() < sizeof(addr.sun_path) &&
                         ::bind(sfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  struct Case {
    std::string name, path, want;
    bool not_found = false;
  };
  std::vector<Case> cases = {
      {"fifo with no writer", fifo, "is a FIFO (named pipe)"},
      {"/dev/zero", "/dev/zero", "is a character device"},
      {"/dev/null", "/dev/null", "is a character device"},
      {"directory", dir_.string(), "is a directory"},
      {"/proc pseudo-file", "/proc/self/status", "is a kernel pseudo-file"},
      {"/sys pseudo-file", "/sys/kernel/mm/transparent_hugepage/enabled",
       "is a kernel pseudo-file"},
      {"missing", (dir_ / "nope").string(), "No such file", true},
  };
  if (have_sock) cases.push_back({"unix socket", sock, "is a socket"});
  if (fs::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    cases.push_back({"/sys pseudo-file", "/sys/kernel/mm/transparent_hugepage/enabled",
                     "is a kernel pseudo-file"});
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    for (const auto& got : {ReadBoundedFile(c.path, kConfigFileLimit).status(),
                            CheckRegularFile(c.path, kTraceFileLimit).status(),
                            OpenBoundedFile(c.path, kSecretFileLimit).status()}) {
      ASSERT_FALSE(got.ok());
      EXPECT_NE(got.message().find(c.path), std::string::npos) << got.message();
      EXPECT_NE(got.message().find(c.want), std::string::npos) << got.message();
      EXPECT_EQ(got.IsNotFound(), c.not_found);
    }
  }
  ::close(sfd);
}

TEST_F(BoundedFileTest, SizeLimits) {
  const FileLimit tiny{"tiny file", 10, 0};
  struct Case {
    std::string name, text;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"empty", "", true},
      {"at the limit", std::string(10, 'x'), true},
      {"one over", std::string(11, 'x'), false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string p = Write("f", c.text);
    auto r = ReadBoundedFile(p, tiny);
    ASSERT_EQ(r.ok(), c.ok) << r.status().message();
    if (c.ok) {
      EXPECT_EQ(*r, c.text);
    } else {
      EXPECT_NE(r.status().message().find("over the limit"), std::string::npos)
          << r.status().message();
      EXPECT_TRUE(r.status().IsInvalid());
    }
  }
}

TEST_F(BoundedFileTest, MemfdThroughProcIsARegularFile) {
  // The fuzz harnesses hand the loaders /proc/self/fd/N of a memfd.
  const int fd = ::memfd_create("aiscale-test", 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "abc", 3), 3);
  auto r = ReadBoundedFile("/proc/self/fd/" + std::to_string(fd), kConfigFileLimit);
  ::close(fd);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "abc");
}

TEST_F(BoundedFileTest, SymlinkToARegularFileIsRead) {
  const std::string p = Write("real", "hello");
  const std::string link = (dir_ / "link").string();
  ASSERT_EQ(::symlink(p.c_str(), link.c_str()), 0);
  auto r = ReadBoundedFile(link, kConfigFileLimit);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "hello");
  const std::string dev = (dir_ / "zero").string();
  ASSERT_EQ(::symlink("/dev/zero", dev.c_str()), 0);
  EXPECT_FALSE(ReadBoundedFile(dev, kConfigFileLimit).ok());
}

}  // namespace
}  // namespace aiscale
