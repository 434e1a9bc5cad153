#include "netiface/cni/hash.h"

// The low-level functions are deprecated in OpenSSL 3 in favour of EVP, which is what they avoid (hash.h).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace netiface::cni {

std::vector<unsigned char> Digest(Hash hash, std::string_view data) {
  std::vector<unsigned char> md;
  switch (hash) {
    case Hash::kSha1: {
      md.resize(SHA_DIGEST_LENGTH);
      SHA_CTX ctx;
      SHA1_Init(&ctx);
      SHA1_Update(&ctx, data.data(), data.size());
      SHA1_Final(md.data(), &ctx);
      break;
    }
    case Hash::kSha256: {
      md.resize(SHA256_DIGEST_LENGTH);
      SHA256_CTX ctx;
      SHA256_Init(&ctx);
      SHA256_Update(&ctx, data.data(), data.size());
      SHA256_Final(md.data(), &ctx);
      break;
    }
    case Hash::kSha512: {
      md.resize(SHA512_DIGEST_LENGTH);
      SHA512_CTX ctx;
      SHA512_Init(&ctx);
      SHA512_Update(&ctx, data.data(), data.size());
      SHA512_Final(md.data(), &ctx);
      break;
    }
  }
  return md;
}

std::string HexDigest(Hash hash, std::string_view data) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : Digest(hash, data)) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

}  // namespace netiface::cni
