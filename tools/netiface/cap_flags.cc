#include "netiface/cli/cap_flags.h"

#include <sys/socket.h>

#include <charconv>

#include "netiface/cni/error.h"
#include "netiface/cni/ip.h"
#include "netiface/cni/mac.h"

namespace netiface::cli {
namespace {

using nlohmann::json;

[[noreturn]] void Bad(const std::string& flag, const std::string& value, const std::string& why) {
  throw cni::Error(cni::kInvalidEnv, flag + " \"" + value + "\": " + why);
}

int ParsePort(const std::string& text, const std::string& value, const char* which) {
  int port = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535) {
    Bad("--publish", value, std::string(which) + " must be a port number 1-65535, not \"" + text + "\"");
  }
  return port;
}

void SetOnce(json& caps, const char* key, json value, const char* flag) {
  if (caps.contains(key)) {
    throw cni::Error(cni::kInvalidEnv,
                     std::string(flag) + " and --cap-args both set \"" + key + "\": give one of them");
  }
  caps[key] = std::move(value);
}

}  // namespace

json ParsePublish(const std::string& value) {
  std::string rest = value;
  std::string protocol = "tcp";
  if (size_t slash = rest.rfind('/'); slash != std::string::npos) {
    protocol = rest.substr(slash + 1);
    rest.resize(slash);
    if (protocol != "tcp" && protocol != "udp" && protocol != "sctp") {
      Bad("--publish", value, "protocol must be tcp, udp or sctp, not \"" + protocol + "\"");
    }
  }
  std::string host_ip;
  if (!rest.empty() && rest.front() == '[') {  // [v6]:host:container
    size_t close = rest.find(']');
    if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      Bad("--publish", value, "a bracketed IPv6 host address must be followed by ':HOSTPORT:CONTAINERPORT'");
    }
    host_ip = rest.substr(1, close - 1);
    rest = rest.substr(close + 2);
    auto ip = cni::IpAddr::Parse(host_ip);
    if (!ip || ip->family() != AF_INET6) Bad("--publish", value, "\"" + host_ip + "\" is not an IPv6 address");
  }
  size_t last = rest.rfind(':');
  if (last == std::string::npos) Bad("--publish", value, "expected [HOSTIP:]HOSTPORT:CONTAINERPORT[/PROTOCOL]");
  std::string container = rest.substr(last + 1);
  std::string host = rest.substr(0, last);
  if (host_ip.empty()) {
    if (size_t first = host.rfind(':'); first != std::string::npos) {
      host_ip = host.substr(0, first);
      host = host.substr(first + 1);
      auto ip = cni::IpAddr::Parse(host_ip);
      if (!ip || ip->family() == AF_INET6) {
        Bad("--publish", value, "\"" + host_ip + "\" is not an IPv4 address (write an IPv6 one in brackets)");
      }
    }
  }
  json m = {{"hostPort", ParsePort(host, value, "HOSTPORT")},
            {"containerPort", ParsePort(container, value, "CONTAINERPORT")},
            {"protocol", protocol}};
  if (!host_ip.empty()) m["hostIP"] = host_ip;
  return m;
}

json MergeCapFlags(json caps, const CapFlags& flags) {
  if (caps.is_null()) caps = json::object();
  if (!flags.publish.empty()) {
    json mappings = json::array();
    for (const auto& p : flags.publish) mappings.push_back(ParsePublish(p));
    SetOnce(caps, "portMappings", std::move(mappings), "--publish");
  }
  json bw = json::object();
  auto put = [&bw](const char* key, const std::optional<uint64_t>& v) {
    if (v) bw[key] = *v;
  };
  put("ingressRate", flags.ingress_rate);
  put("ingressBurst", flags.ingress_burst);
  put("egressRate", flags.egress_rate);
  put("egressBurst", flags.egress_burst);
  if (!bw.empty()) SetOnce(caps, "bandwidth", std::move(bw), "--ingress-*/--egress-*");
  if (!flags.mac.empty()) {
    if (!cni::NormalizeMac(flags.mac)) Bad("--mac", flags.mac, "not a MAC address");
    SetOnce(caps, "mac", flags.mac, "--mac");
  }
  if (!flags.ips.empty()) {
    json ips = json::array();
    for (const auto& ip : flags.ips) {
      if (!cni::IpNet::Parse(ip) && !cni::IpAddr::Parse(ip)) Bad("--ip", ip, "not an address");
      ips.push_back(ip);
    }
    SetOnce(caps, "ips", std::move(ips), "--ip");
  }
  return caps;
}

}  // namespace netiface::cli
