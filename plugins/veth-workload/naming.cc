#include "netiface/veth_workload/naming.h"

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace netiface::veth_workload {

// The low-level SHA1_* functions: OpenSSL 3's one-shot SHA1() goes through EVP, which loads the
// provider configuration (openssl.cnf) first and costs about a millisecond per process.
std::string Sha1Hex(std::string_view data) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA_CTX ctx;
  SHA1_Init(&ctx);
  SHA1_Update(&ctx, data.data(), data.size());
  SHA1_Final(digest, &ctx);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

std::string HostVethHashInput(const Identity& id) {
  if (!id.IsK8s()) return id.container_id + "." + id.ifname;
  std::string base = id.pod_namespace + "." + id.pod;
  return id.ifname == "eth0" ? base : base + "." + id.ifname;
}

std::string HostVethName(std::string_view prefix, const Identity& id) {
  size_t digits = prefix.size() < kMaxLinkName ? kMaxLinkName - prefix.size() : 0;
  return std::string(prefix) + Sha1Hex(HostVethHashInput(id)).substr(0, digits);
}

std::string EscapeSegment(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    out += c;
    if (c == '-') out += '-';
  }
  return out;
}

std::string EndpointName(const Identity& id) {
  if (id.IsK8s()) {
    return EscapeSegment(id.node) + "-k8s-" + EscapeSegment(id.pod) + "-" + EscapeSegment(id.ifname);
  }
  return EscapeSegment(id.node) + "-cni-" + EscapeSegment(id.container_id) + "-" + EscapeSegment(id.ifname);
}

}  // namespace netiface::veth_workload
