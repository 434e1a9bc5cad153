#include "netiface/veth_workload/naming.h"

#include <gtest/gtest.h>

namespace netiface::veth_workload {
namespace {

Identity Pod(const std::string& ns, const std::string& pod, const std::string& ifname = "eth0") {
  return {.node = "node1", .pod_namespace = ns, .pod = pod, .container_id = "ctr1", .ifname = ifname};
}

TEST(Sha1Test, KnownVectors) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Sha1Hex("namespace.podname"), "82111e10a9636c70ddcec6e05748b2038c8968de");
}

// Calico's documented example: pod namespace/podname gets cali82111e10a96 (it hashes
// "<namespace>.<pod>").
TEST(HostVethNameTest, CalicoExample) {
  EXPECT_EQ(HostVethHashInput(Pod("namespace", "podname")), "namespace.podname");
  EXPECT_EQ(HostVethName("cali", Pod("namespace", "podname")), "cali82111e10a96");
}

TEST(HostVethNameTest, OtherInterfacesOfAPod) {
  EXPECT_EQ(HostVethHashInput(Pod("namespace", "podname", "net1")), "namespace.podname.net1");
  EXPECT_EQ(HostVethName("cali", Pod("namespace", "podname", "net1")), "cali22193c55314");
}

TEST(HostVethNameTest, PlainContainer) {
  Identity id{.node = "node1", .container_id = "ctr1", .ifname = "eth0"};
  EXPECT_EQ(HostVethHashInput(id), "ctr1.eth0");
  EXPECT_EQ(HostVethName("cali", id), "cali4e73312f683");
}

TEST(HostVethNameTest, PrefixFillsFifteenCharacters) {
  for (std::string prefix : {"v", "vw", "veth", "abcdefghijk"}) {
    std::string name = HostVethName(prefix, Pod("namespace", "podname"));
    EXPECT_EQ(name.size(), 15u) << name;
    EXPECT_EQ(name.substr(0, prefix.size()), prefix);
    EXPECT_EQ(name.substr(prefix.size()), std::string("82111e10a9636c70").substr(0, 15 - prefix.size()));
  }
}

TEST(HostVethNameTest, DistinctWorkloadsGetDistinctNames) {
  EXPECT_NE(HostVethName("cali", Pod("a", "p")), HostVethName("cali", Pod("b", "p")));
  EXPECT_NE(HostVethName("cali", Pod("a", "p")), HostVethName("cali", Pod("a", "p", "net1")));
}

TEST(EndpointNameTest, EscapesDashes) {
  EXPECT_EQ(EscapeSegment("a-b--c"), "a--b----c");
  EXPECT_EQ(EscapeSegment("plain"), "plain");
}

TEST(EndpointNameTest, CalicoExample) { EXPECT_EQ(EndpointName(Pod("default", "mypod-1")), "node1-k8s-mypod--1-eth0"); }

TEST(EndpointNameTest, ContainerAndDashedNode) {
  Identity id{.node = "my-node", .container_id = "abc-1", .ifname = "net-1"};
  EXPECT_EQ(EndpointName(id), "my--node-cni-abc--1-net--1");
}

}  // namespace
}  // namespace netiface::veth_workload
