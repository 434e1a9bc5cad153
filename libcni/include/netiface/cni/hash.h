// The hashes the suite names things with (veth and ifb names, rule comments, vtep MACs, cnitool's container
// IDs). OpenSSL's low-level SHA functions only: its one-shot and EVP calls go through the provider
// machinery, which costs a static plugin megabytes of code and reads openssl.cnf at every process start.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace netiface::cni {

enum class Hash { kSha1, kSha256, kSha512 };

std::vector<unsigned char> Digest(Hash hash, std::string_view data);
// The digest in lowercase hex.
std::string HexDigest(Hash hash, std::string_view data);

}  // namespace netiface::cni
