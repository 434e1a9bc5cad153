// host-local on a nearly full file system (issue 17, case 3), ours against the reference in
// /usr/lib/cni: the owner index is a cache and must never cost an ADD that the plain store could serve.
// Each test mounts a small tmpfs on a fresh folder inside a private mount namespace that the test
// process enters for the test's length (root): the machine's own mounts never see it.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "netiface/cni/ip.h"
#include "testutil.h"

namespace netiface::testing {
namespace {

using nlohmann::json;

// A tmpfs of `size` on a fresh folder, in a mount namespace of this process's own; the destructor
// unmounts it and returns to the original mount namespace. Check ok() after construction.
class PrivateTmpfs {
 public:
  explicit PrivateTmpfs(const std::string& size) {
    original_ = ::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    if (original_ < 0) {
      error_ = std::string("open /proc/self/ns/mnt: ") + std::strerror(errno);
      return;
    }
    if (::unshare(CLONE_NEWNS) != 0) {
      error_ = std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
      return;
    }
    entered_ = true;
    // Nothing mounted from here on propagates back to the machine's namespace.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      error_ = std::string("make / private: ") + std::strerror(errno);
      return;
    }
    const std::string opts = "size=" + size + ",mode=0755";
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
      error_ = std::string("mount tmpfs: ") + std::strerror(errno);
      return;
    }
    mounted_ = true;
  }
  ~PrivateTmpfs() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
    if (entered_ && ::setns(original_, CLONE_NEWNS) != 0) std::abort();  // never run on in the wrong namespace
    if (original_ >= 0) ::close(original_);
  }
  PrivateTmpfs(const PrivateTmpfs&) = delete;
  PrivateTmpfs& operator=(const PrivateTmpfs&) = delete;

  bool ok() const { return mounted_; }
  const std::string& error() const { return error_; }
  const std::string& path() const { return dir_.path(); }
  std::string operator/(const std::string& rel) const { return dir_ / rel; }

 private:
  TempDir dir_;  // destroyed after the unmount and the return
  int original_ = -1;
  bool entered_ = false;
  bool mounted_ = false;
  std::string error_;
};

// Fills the file system of `path` with a file of its own until a write fails for want of space.
void FillUp(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::string block(4096, 'x');
  while (::write(fd, block.data(), block.size()) > 0) {
  }
  EXPECT_EQ(errno, ENOSPC);
  ::close(fd);
}

class HostLocalFullDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    NETIFACE_REQUIRE_ROOT();
    if (!HaveReference()) GTEST_SKIP() << "no reference plugins in " << RefDir();
  }
  static std::string Ours() { return Bin("host-local"); }
  static std::string Ref() { return RefDir() + "/host-local"; }

  static json Conf(const std::string& data_dir) {
    return {{"cniVersion", "1.0.0"},
            {"name", "hlnet"},
            {"type", "host-local"},
            {"ipam",
             {{"type", "host-local"},
              {"dataDir", data_dir},
              {"ranges", json::array({json::array({{{"subnet", "10.10.0.0/24"}}})})}}}};
  }
  static RunResult Call(const std::string& bin, const std::string& command, const std::string& cid, const json& conf) {
    PluginCall c;
    c.command = command;
    c.container_id = cid;
    c.netns = "/var/run/netns/not-opened";
    c.path = bin.substr(0, bin.rfind('/'));
    return RunPlugin(bin, c, conf);
  }
  // How many of `n` ADDs (containers <prefix>0..n-1) succeed.
  static int AddsThatSucceed(const std::string& bin, const json& conf, const std::string& prefix, int n) {
    int ok = 0;
    for (int i = 0; i < n; ++i) ok += Call(bin, "ADD", prefix + std::to_string(i), conf).exit_code == 0;
    return ok;
  }
  // The reservation files of the network, checked to hold distinct addresses.
  static std::set<std::string> Reserved(const std::string& data_dir) {
    std::set<std::string> out;
    for (const auto& f : ListDir(data_dir + "/hlnet")) {
      if (cni::IpAddr::Parse(f)) out.insert(f);
    }
    return out;
  }
};

// On the same tiny file system ours completes at least the ADDs the reference does (it used to
// complete 1 of 40 where the reference completed 15: the index's 257 files took the space), and a
// DEL's freed space goes to the next ADD, whichever host-local makes it.
TEST_F(HostLocalFullDisk, OursServesWhatTheReferenceServes) {
  int ref = 0;
  {
    PrivateTmpfs fs("64k");
    ASSERT_TRUE(fs.ok()) << fs.error();
    ref = AddsThatSucceed(Ref(), Conf(fs.path()), "ref", 40);
  }
  ASSERT_GT(ref, 0);
  ASSERT_LT(ref, 40);  // the file system did fill up: the comparison is not vacuous
  PrivateTmpfs fs("64k");
  ASSERT_TRUE(fs.ok()) << fs.error();
  const json conf = Conf(fs.path());
  const int ours = AddsThatSucceed(Ours(), conf, "ours", 40);
  RecordProperty("reference_adds", ref);
  RecordProperty("our_adds", ours);
  EXPECT_GE(ours, ref);
  EXPECT_EQ(static_cast<int>(Reserved(fs.path()).size()), ours);
  ASSERT_GT(ours, 2);

  // Full now. A DEL by ours frees what the reference's next ADD needs, and the other way round.
  ASSERT_NE(Call(Ref(), "ADD", "ref-late", conf).exit_code, 0);
  ASSERT_EQ(Call(Ours(), "DEL", "ours0", conf).exit_code, 0);
  RunResult r = Call(Ref(), "ADD", "ref-late", conf);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  ASSERT_EQ(Call(Ref(), "DEL", "ours1", conf).exit_code, 0);
  r = Call(Ours(), "ADD", "ours-late", conf);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(static_cast<int>(Reserved(fs.path()).size()), ours);
  // The store is still the truth for both: every holder is found and released.
  for (const std::string cid : {"ref-late", "ours-late"}) {
    EXPECT_EQ(Call(Ours(), "CHECK", cid, conf).exit_code, 0) << cid;
    EXPECT_EQ(Call(Ours(), "DEL", cid, conf).exit_code, 0) << cid;
  }
  EXPECT_EQ(static_cast<int>(Reserved(fs.path()).size()), ours - 2);
}

// With room, ours keeps its index; when the file system then fills up (someone else's file), the index
// gives its space back to the reservation instead of failing the ADD, and the store stays the truth.
TEST_F(HostLocalFullDisk, TheIndexYieldsItsSpaceToAReservation) {
  PrivateTmpfs fs("4m");
  ASSERT_TRUE(fs.ok()) << fs.error();
  const json conf = Conf(fs.path());
  ASSERT_EQ(AddsThatSucceed(Ours(), conf, "c", 3), 3);
  ASSERT_FALSE(ListDir(fs / ".netiface/hlnet").empty()) << "the index was never written";
  FillUp(fs / "filler");
  ASSERT_NE(Call(Ref(), "ADD", "ref", conf).exit_code, 0) << "the file system is not full";

  RunResult r = Call(Ours(), "ADD", "c3", conf);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Reserved(fs.path()).size(), 4u);
  for (const std::string cid : {"c0", "c3"}) EXPECT_EQ(Call(Ours(), "CHECK", cid, conf).exit_code, 0) << cid;
  EXPECT_EQ(Call(Ours(), "DEL", "c0", conf).exit_code, 0);
  EXPECT_EQ(Reserved(fs.path()).size(), 3u);

  // Space again: the index comes back.
  ASSERT_EQ(::unlink((fs / "filler").c_str()), 0);
  EXPECT_EQ(Call(Ours(), "ADD", "c4", conf).exit_code, 0);
  EXPECT_FALSE(ListDir(fs / ".netiface/hlnet").empty());
  EXPECT_EQ(Call(Ours(), "CHECK", "c4", conf).exit_code, 0);
}

}  // namespace
}  // namespace netiface::testing
