// Loading libnftables: a missing library is a clean kNatFailure, the real one resolves every entry point.
#include "nftables.h"

#include <gtest/gtest.h>

#include "netiface/cni/error.h"

namespace netiface::nat {
namespace {

TEST(NftApi, MissingLibraryIsANatFailure) {
  try {
    LoadNftApi("libnftables-does-not-exist.so.1");
    FAIL() << "loaded a library that does not exist";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kNatFailure);
    EXPECT_TRUE(e.msg().starts_with("libnftables is not available: ")) << e.msg();
  }
}

TEST(NftApi, MissingSymbolIsANatFailure) {
  // libc is loaded but has none of the entry points.
  try {
    LoadNftApi("libc.so.6");
    FAIL() << "libc passed for libnftables";
  } catch (const cni::Error& e) {
    EXPECT_EQ(e.code(), cni::kNatFailure);
    EXPECT_NE(e.msg().find("nft_ctx_new"), std::string::npos) << e.msg();
  }
}

TEST(NftApi, ResolvesEveryEntryPoint) {
  const NftApi& api = Nftables();
  EXPECT_NE(api.ctx_new, nullptr);
  EXPECT_NE(api.ctx_free, nullptr);
  EXPECT_NE(api.run_cmd_from_buffer, nullptr);
  EXPECT_NE(api.ctx_buffer_output, nullptr);
  EXPECT_NE(api.ctx_get_output_buffer, nullptr);
  EXPECT_NE(api.ctx_buffer_error, nullptr);
  EXPECT_NE(api.ctx_get_error_buffer, nullptr);
  EXPECT_NE(api.ctx_output_set_flags, nullptr);
  EXPECT_EQ(&api, &Nftables());
}

}  // namespace
}  // namespace netiface::nat
