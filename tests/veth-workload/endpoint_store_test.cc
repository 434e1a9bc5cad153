#include "netiface/veth_workload/endpoint_store.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "testutil.h"

namespace netiface::veth_workload {
namespace {

EndpointRecord Record(const std::string& ns, const std::string& pod, const std::string& cid,
                      const std::string& ifname = "eth0") {
  EndpointRecord r;
  r.name = "node1-" + std::string(ns.empty() ? "cni-" + cid : "k8s-" + pod) + "-" + ifname;
  r.network = "vwnet";
  r.node = "node1";
  r.orchestrator = ns.empty() ? "cni" : "k8s";
  r.pod_namespace = ns;
  r.pod = pod;
  r.container_id = cid;
  r.ifname = ifname;
  r.netns = "/run/netns/" + cid;
  r.host_veth = "cali0123456789a";
  r.container_mac = "0a:58:0a:00:00:02";
  r.ip_networks = {*cni::IpNet::Parse("10.0.0.2/32"), *cni::IpNet::Parse("fd00::2/128")};
  r.masquerade = {*cni::IpNet::Parse("10.0.0.2/24")};
  r.ip_nats = {{*cni::IpAddr::Parse("192.0.2.1"), *cni::IpAddr::Parse("10.0.0.2")}};
  return r;
}

TEST(EndpointStoreTest, WriteReadRoundTrip) {
  testing::TempDir dir;
  EndpointStore store(dir.path(), "vwnet");
  EndpointRecord r = Record("default", "web-1", "c1");
  store.Write(r);
  std::string path = store.PathFor("default", r.name);
  EXPECT_EQ(path, dir / "vwnet/default/node1-k8s-web-1-eth0.json");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto j = nlohmann::json::parse(testing::ReadFile(path));
  EXPECT_EQ(j["containerID"], "c1");
  EXPECT_EQ(j["hostVeth"], "cali0123456789a");
  EXPECT_EQ(j["ipNetworks"], nlohmann::json({"10.0.0.2/32", "fd00::2/128"}));
  EXPECT_EQ(j["ipNats"][0]["externalIp"], "192.0.2.1");
  EXPECT_EQ(store.Read("default", r.name), r);
  EXPECT_FALSE(store.Read("default", "nope").has_value());
  EXPECT_EQ(RecordFromJson(RecordToJson(r)), r);
}

TEST(EndpointStoreTest, SamePodNameInTwoNamespaces) {
  testing::TempDir dir;
  EndpointStore store(dir.path(), "vwnet");
  store.Write(Record("a", "web", "c1"));
  store.Write(Record("b", "web", "c2"));
  store.Write(Record("", "", "c3"));
  EXPECT_EQ(store.Read("a", "node1-k8s-web-eth0")->container_id, "c1");
  EXPECT_EQ(store.Read("b", "node1-k8s-web-eth0")->container_id, "c2");
  EXPECT_EQ(store.Read("_cni", "node1-cni-c3-eth0")->container_id, "c3");
  EXPECT_EQ(store.List().size(), 3u);
}

TEST(EndpointStoreTest, RemoveOnlyWhenOwned) {
  testing::TempDir dir;
  EndpointStore store(dir.path(), "vwnet");
  EndpointRecord r = Record("default", "web", "new-sandbox");
  store.Write(r);
  EXPECT_FALSE(store.RemoveIfOwned("default", r.name, "old-sandbox", "eth0"));
  EXPECT_TRUE(store.Read("default", r.name).has_value());
  EXPECT_TRUE(store.RemoveIfOwned("default", r.name, "new-sandbox", "eth0"));
  EXPECT_FALSE(store.Read("default", r.name).has_value());
  EXPECT_FALSE(store.RemoveIfOwned("default", r.name, "new-sandbox", "eth0"));
}

TEST(EndpointStoreTest, FindByAttachment) {
  testing::TempDir dir;
  EndpointStore store(dir.path(), "vwnet");
  store.Write(Record("a", "web", "c1"));
  store.Write(Record("a", "web", "c1", "net1"));
  store.Write(Record("", "", "c2"));
  EXPECT_EQ(store.FindByAttachment("c1", "net1")->name, "node1-k8s-web-net1");
  EXPECT_EQ(store.FindByAttachment("c2", "eth0")->Folder(), "_cni");
  EXPECT_FALSE(store.FindByAttachment("c2", "net1").has_value());
  EXPECT_FALSE(EndpointStore(dir / "absent", "vwnet").FindByAttachment("c1", "eth0").has_value());
}

// Each attachment has a second name for its record: DEL finds it in one open, also after a newer
// sandbox of the same pod replaced the record under its name, and the link is no new file.
TEST(EndpointStoreTest, AttachmentLinks) {
  testing::TempDir dir;
  EndpointStore store(dir.path(), "vwnet");
  store.Write(Record("default", "web", "old-sandbox"));
  store.Write(Record("default", "web", "new-sandbox"));  // same pod, same record name
  struct stat st {};
  ASSERT_EQ(::stat((dir / "vwnet/.by-attachment/new-sandbox:eth0").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 2u);  // the record's own file
  EXPECT_EQ(store.List().size(), 1u);
  EXPECT_EQ(store.FindByAttachment("old-sandbox", "eth0")->container_id, "old-sandbox");
  EXPECT_EQ(store.FindByAttachment("new-sandbox", "eth0")->container_id, "new-sandbox");

  // The old sandbox's DEL: its link goes, the newer record stays.
  EXPECT_FALSE(store.RemoveIfOwned("default", "node1-k8s-web-eth0", "old-sandbox", "eth0"));
  EXPECT_FALSE(store.FindByAttachment("old-sandbox", "eth0").has_value());
  EXPECT_EQ(store.Read("default", "node1-k8s-web-eth0")->container_id, "new-sandbox");
  EXPECT_TRUE(store.RemoveIfOwned("default", "node1-k8s-web-eth0", "new-sandbox", "eth0"));
  EXPECT_FALSE(store.FindByAttachment("new-sandbox", "eth0").has_value());
  EXPECT_TRUE(testing::ListDir(dir / "vwnet/.by-attachment").empty());

  // A link is replaced when its attachment is written again (an ADD after a crash).
  store.Write(Record("", "", "c9"));
  store.Write(Record("", "", "c9"));
  EXPECT_EQ(store.FindByAttachment("c9", "eth0")->name, "node1-cni-c9-eth0");
}

TEST(EndpointStoreTest, GcRemovesLinksOfReplacedRecords) {
  testing::TempDir dir;
  EndpointStore store(dir.path(), "vwnet");
  store.Write(Record("default", "web", "old-sandbox"));
  store.Write(Record("default", "web", "new-sandbox"));
  std::vector<std::string> errors;
  EXPECT_TRUE(store.RemoveStale({{"new-sandbox", "eth0"}}, errors).empty());
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(testing::ListDir(dir / "vwnet/.by-attachment"), std::vector<std::string>{"new-sandbox:eth0"});
  EXPECT_EQ(store.RemoveStale({}, errors).size(), 1u);
  EXPECT_TRUE(testing::ListDir(dir / "vwnet/.by-attachment").empty());
}

TEST(EndpointStoreTest, MissingStoreIsEmpty) {
  testing::TempDir dir;
  EndpointStore store(dir / "absent", "vwnet");
  EXPECT_TRUE(store.List().empty());
  EXPECT_FALSE(store.RemoveIfOwned("default", "x", "c", "eth0"));
  std::vector<std::string> errors;
  EXPECT_TRUE(store.RemoveStale({}, errors).empty());
  EXPECT_TRUE(errors.empty());
}

TEST(EndpointStoreTest, UnreadableRecords) {
  testing::TempDir dir;
  EndpointStore store(dir.path(), "vwnet");
  store.Write(Record("default", "web", "c1"));
  testing::WriteFile(dir / "vwnet/default/garbage.json", "{not json");
  EXPECT_EQ(store.List().size(), 1u);
  try {
    store.Read("default", "garbage");
    ADD_FAILURE() << "garbage parsed";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kDecodeFailure);
  }
  EXPECT_TRUE(store.RemoveIfOwned("default", "garbage", "anyone", "eth0"));
  EXPECT_EQ(testing::ListDir(dir / "vwnet/default"), std::vector<std::string>{"node1-k8s-web-eth0.json"});
}

TEST(EndpointStoreTest, RemoveStaleKeepsValidAttachments) {
  testing::TempDir dir;
  EndpointStore store(dir.path(), "vwnet");
  store.Write(Record("a", "web", "c1"));
  store.Write(Record("a", "web", "c1", "net1"));
  store.Write(Record("b", "db", "c2"));
  store.Write(Record("", "", "c3"));
  std::vector<std::string> errors;
  auto removed = store.RemoveStale({{"c1", "eth0"}, {"c3", "eth0"}}, errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(removed.size(), 2u);
  std::vector<std::string> ids;
  for (const auto& r : removed) ids.push_back(r.container_id + "/" + r.ifname);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"c1/net1", "c2/eth0"}));
  auto left = store.List();
  ASSERT_EQ(left.size(), 2u);
  // An empty valid list is meaningful: nothing is valid.
  EXPECT_EQ(store.RemoveStale({}, errors).size(), 2u);
  EXPECT_TRUE(store.List().empty());
}

// A killed ADD's draft (<name>.json.tmp-XXXX, its writer gone) is removed by the record's removal, even
// when there is no record, and by GC; a draft being written is left alone (issue 17, case 2).
TEST(EndpointStoreTest, AbandonedDraftsGoLiveOnesStay) {
  testing::TempDir dir;
  EndpointStore store(dir.path(), "vwnet");
  EndpointRecord r = Record("default", "web", "c1");
  auto live = store.Draft("default", "node1-k8s-db-eth0");
  const std::string path = store.PathFor("default", r.name);
  testing::WriteFile(path + ".tmp-00000000abcd", "");  // as a SIGKILLed writer leaves it
  EXPECT_FALSE(store.RemoveIfOwned("default", r.name, "c1", "eth0"));
  EXPECT_EQ(testing::ListDir(dir / "vwnet/default").size(), 1u);  // only the live draft
  testing::WriteFile(path + ".tmp-00000000abce", "");
  std::vector<std::string> errors;
  store.RemoveStale({}, errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(testing::ListDir(dir / "vwnet/default").size(), 1u);
  EXPECT_TRUE(testing::ListDir(dir / "vwnet/default")[0].starts_with("node1-k8s-db-eth0.json.tmp-"));
  store.Write(Record("default", "db", "c2"), std::move(live));
  EXPECT_EQ(store.Read("default", "node1-k8s-db-eth0")->container_id, "c2");
}

TEST(EndpointStoreTest, PrepareFailsUnderAFile) {
  testing::TempDir dir;
  testing::WriteFile(dir / "file", "x");
  EndpointStore store(dir / "file", "vwnet");
  try {
    store.Prepare();
    ADD_FAILURE() << "created a folder under a file";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kIoFailure);
  }
}

TEST(EndpointStoreTest, OtherNetworksAreSeparate) {
  testing::TempDir dir;
  EndpointStore a(dir.path(), "net-a"), b(dir.path(), "net-b");
  a.Write(Record("default", "web", "c1"));
  EXPECT_TRUE(b.List().empty());
  std::vector<std::string> errors;
  EXPECT_TRUE(b.RemoveStale({}, errors).empty());
  EXPECT_EQ(a.List().size(), 1u);
}

}  // namespace
}  // namespace netiface::veth_workload
