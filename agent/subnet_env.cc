#include "netiface/agent/subnet_env.h"

#include <sys/socket.h>

#include <string_view>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"

namespace netiface::agent {
namespace {

std::string FirstHost(const cni::IpNet& subnet) {
  const cni::IpNet net = subnet.Network();
  return cni::IpNet(net.addr().Next(), net.prefix_len()).ToString();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<cni::IpNet> ParseSubnet(std::string_view value, int family) {
  auto net = cni::IpNet::Parse(Trim(value));
  if (!net || net->family() != family) return std::nullopt;
  return net->Network();
}

}  // namespace

std::string RenderSubnetEnv(const SubnetEnvValues& v) {
  std::string out;
  if (v.network) out += "FLANNEL_NETWORK=" + v.network->Network().ToString() + "\n";
  if (v.subnet) out += "FLANNEL_SUBNET=" + FirstHost(*v.subnet) + "\n";
  if (v.ipv6_network) out += "FLANNEL_IPV6_NETWORK=" + v.ipv6_network->Network().ToString() + "\n";
  if (v.ipv6_subnet) out += "FLANNEL_IPV6_SUBNET=" + FirstHost(*v.ipv6_subnet) + "\n";
  out += "FLANNEL_MTU=" + std::to_string(v.mtu) + "\n";
  out += std::string("FLANNEL_IPMASQ=") + (v.ipmasq ? "true" : "false") + "\n";
  return out;
}

void WriteSubnetEnv(const std::string& path, const SubnetEnvValues& v) {
  if (path.empty()) throw cni::Error(cni::kIoFailure, "cannot write subnet.env: the path is empty");
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) cni::MakeDirs(path.substr(0, slash), 0755);
  cni::WriteFileAtomic(path, RenderSubnetEnv(v), 0644, cni::Sync::kPowerLoss);
}

std::optional<PreviousSubnet> ReadPreviousSubnet(const std::string& path) {
  std::optional<std::string> text;
  try {
    text = cni::ReadFileIfExists(path);
  } catch (const cni::Error&) {
    return std::nullopt;
  }
  if (!text) return std::nullopt;
  std::optional<cni::IpNet> v4, v6;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = Trim(rest.substr(0, nl));
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, eq));
    if (key == "FLANNEL_SUBNET") v4 = ParseSubnet(line.substr(eq + 1), AF_INET);
    if (key == "FLANNEL_IPV6_SUBNET") v6 = ParseSubnet(line.substr(eq + 1), AF_INET6);
  }
  if (!v4) return std::nullopt;
  return PreviousSubnet{*v4, v6};
}

}  // namespace netiface::agent
