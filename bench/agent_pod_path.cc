#include "agent_pod_path.h"

#include <fstream>
#include <stdexcept>

#include "netiface/cni/ip.h"

namespace netiface::bench::agent {
namespace {

// `ip -n <ns> -batch <file>` of `lines`, the file kept in the bench's folder.
void Batch(const Rig& rig, const std::string& ns, const std::string& name, const std::vector<std::string>& lines) {
  const std::string path = rig.dir() / name;
  {
    std::ofstream f(path, std::ios::trunc);
    for (const std::string& l : lines) f << l << "\n";
    if (!f) throw std::runtime_error("cannot write " + path);
  }
  ShOrThrow("ip -n " + ns + " -batch " + path);
}

}  // namespace

std::string HostIn(const std::string& subnet, int n) {
  auto net = cni::IpNet::Parse(subnet);
  if (!net || !net->addr().is_v4() || net->prefix_len() != 24) throw std::runtime_error("not an IPv4 /24: " + subnet);
  std::string a = net->Network().addr().ToString();
  return a.substr(0, a.rfind('.')) + "." + std::to_string(n);
}

RemoteNode::RemoteNode(const Rig& rig, const std::vector<Peer>& subnets) {
  if (subnets.empty()) throw std::invalid_argument("RemoteNode: no subnets");
  node_ = std::make_unique<Netns>("nab-r-" + rig.tag());
  pod_ = std::make_unique<Netns>("nab-rp-" + rig.tag());
  const std::string& n = node_->name();
  Batch(rig, rig.underlay().name(), "remote-underlay.batch",
        {"link add v2 type veth peer name eth0 netns " + n, "link set v2 master br0 up"});
  std::vector<std::string> node = {
      std::string("addr add ") + kRemoteIp + "/24 dev eth0",
      "link set eth0 up",
      std::string("link add flannel.1 address ") + kRemoteMac + " type vxlan id 1 local " + kRemoteIp +
          " dev eth0 dstport 8472 nolearning",
      "addr add " + subnets.front().subnet.v4.addr().ToString() + "/32 dev flannel.1",
      "link set flannel.1 up",
      "link add cni0 type veth peer name eth0 netns " + pod_->name(),
      "link set cni0 up",
  };
  std::vector<std::string> pod = {"link set eth0 up"};
  for (const Peer& p : subnets) {
    node.push_back("addr add " + p.Host(1) + "/24 dev cni0");
    pod.push_back("addr add " + p.Host(2) + "/24 dev eth0");
  }
  pod.push_back("route add default via " + subnets.front().Host(1));
  Batch(rig, n, "remote-node.batch", node);
  Batch(rig, pod_->name(), "remote-pod.batch", pod);
  ShOrThrow("ip netns exec " + n + " sysctl -qw net.ipv4.ip_forward=1");
}

void RemoteNode::DropRouteBack() {
  if (back_.empty()) return;
  ShOrThrow("ip -n " + node_->name() + " route del " + back_);
  back_.clear();
}

void RemoteNode::RouteBackHostGw(const std::string& subnet) {
  DropRouteBack();
  const std::string net = HostIn(subnet, 0) + "/24";
  ShOrThrow("ip -n " + node_->name() + " route replace " + net + " via " + kNodeIp + " dev eth0");
  back_ = net;
}

void RemoteNode::RouteBackVxlan(const std::string& subnet, const std::string& vtep_mac) {
  DropRouteBack();
  const std::string& n = node_->name();
  const std::string addr = HostIn(subnet, 0);
  ShOrThrow("ip -n " + n + " neigh replace " + addr + " lladdr " + vtep_mac + " dev flannel.1 nud permanent && " +
            "ip netns exec " + n + " bridge fdb replace " + vtep_mac + " dev flannel.1 dst " + kNodeIp +
            " self permanent && ip -n " + n + " route replace " + addr + "/24 via " + addr + " dev flannel.1 onlink");
  back_ = addr + "/24";
}

LocalPod::LocalPod(const Rig& rig, const std::string& subnet) {
  pod_ = std::make_unique<Netns>("nab-p-" + rig.tag());
  Batch(rig, rig.node().name(), "local-node.batch",
        {"link add vpod type veth peer name eth0 netns " + pod_->name(),
         "addr add " + HostIn(subnet, 1) + "/24 dev vpod", "link set vpod up"});
  Batch(rig, pod_->name(), "local-pod.batch",
        {"addr add " + HostIn(subnet, 2) + "/24 dev eth0", "link set eth0 up",
         "route add default via " + HostIn(subnet, 1)});
  ShOrThrow("ip netns exec " + rig.node().name() + " sysctl -qw net.ipv4.ip_forward=1");
}

}  // namespace netiface::bench::agent
