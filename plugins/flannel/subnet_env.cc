#include "netiface/flannel/subnet_env.h"

#include <sys/socket.h>

#include <algorithm>

#include "netiface/cni/error.h"
#include "netiface/cni/file.h"

namespace netiface::flannel {
namespace {

constexpr std::string_view kHint = " Check the flannel pod log for this node.";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw cni::Error(cni::kInvalidConfig,
                   "failed to load flannel 'subnet.env' file " + path + ": " + what + "." + std::string(kHint));
}

cni::IpNet ParseCidr(std::string_view value, std::string_view key, int family, const std::string& path) {
  auto net = cni::IpNet::Parse(Trim(value));
  if (!net || net->family() != family) {
    Fail(path, std::string(key) + " has an invalid " + (family == AF_INET ? "IPv4" : "IPv6") + " CIDR \"" +
                   std::string(value) + "\"");
  }
  return net->Network();
}

std::vector<cni::IpNet> ParseCidrList(std::string_view value, std::string_view key, int family,
                                      const std::string& path) {
  std::vector<cni::IpNet> out;
  while (true) {
    size_t comma = value.find(',');
    cni::IpNet n = ParseCidr(value.substr(0, comma), key, family, path);
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

SubnetEnv ParseSubnetEnv(std::string_view text, const std::string& path) {
  SubnetEnv env;
  bool have_mtu = false, have_ipmasq = false;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty() || line.front() == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = Trim(line.substr(0, eq));
    std::string_view value = Trim(line.substr(eq + 1));
    if (key == "FLANNEL_NETWORK") {
      env.networks = ParseCidrList(value, key, AF_INET, path);
    } else if (key == "FLANNEL_SUBNET") {
      env.subnet = ParseCidr(value, key, AF_INET, path);
    } else if (key == "FLANNEL_IPV6_NETWORK") {
      env.ipv6_networks = ParseCidrList(value, key, AF_INET6, path);
    } else if (key == "FLANNEL_IPV6_SUBNET") {
      env.ipv6_subnet = ParseCidr(value, key, AF_INET6, path);
    } else if (key == "FLANNEL_MTU") {
      bool ok = !value.empty() && value.size() <= 5 &&
                std::all_of(value.begin(), value.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      int mtu = ok ? std::stoi(std::string(value)) : -1;
      if (!ok || mtu > 65535) Fail(path, "FLANNEL_MTU has an invalid value \"" + std::string(value) + "\"");
      env.mtu = mtu;
      have_mtu = true;
    } else if (key == "FLANNEL_IPMASQ") {
      env.ipmasq = value == "true";
      have_ipmasq = true;
    }
  }
  std::vector<std::string> missing;
  if (env.networks.empty() && env.ipv6_networks.empty()) missing.push_back("FLANNEL_NETWORK or FLANNEL_IPV6_NETWORK");
  if (!env.subnet && !env.ipv6_subnet) missing.push_back("FLANNEL_SUBNET or FLANNEL_IPV6_SUBNET");
  if (!have_mtu) missing.push_back("FLANNEL_MTU");
  if (!have_ipmasq) missing.push_back("FLANNEL_IPMASQ");
  if (!missing.empty()) {
    std::string what = "missing ";
    for (size_t i = 0; i < missing.size(); ++i) what += (i ? ", " : "") + missing[i];
    Fail(path, what);
  }
  return env;
}

SubnetEnv LoadSubnetEnv(const std::string& path) {
  std::optional<std::string> text;
  try {
    text = cni::ReadFileIfExists(path);
  } catch (const cni::Error& e) {
    throw cni::Error(cni::kIoFailure,
                     "failed to load flannel 'subnet.env' file " + path + ": " + e.msg() + "." + std::string(kHint),
                     e.details());
  }
  if (!text) {
    throw cni::Error(cni::kTryAgainLater,
                     "failed to load flannel 'subnet.env' file " + path + ": no such file." + std::string(kHint));
  }
  return ParseSubnetEnv(*text, path);
}

}  // namespace netiface::flannel
