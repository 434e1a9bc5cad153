// libnftables, loaded with dlopen on first use, and one context per call: a context opens its
// netlink socket in the network namespace the calling thread is in when it is created, so a context
// is never kept across calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

struct nft_ctx;

namespace netiface::nat {

// The libnftables entry points we use (see /usr/include/nftables/libnftables.h).
struct NftApi {
  nft_ctx* (*ctx_new)(uint32_t flags) = nullptr;
  void (*ctx_free)(nft_ctx* ctx) = nullptr;
  int (*run_cmd_from_buffer)(nft_ctx* ctx, const char* buf) = nullptr;
  int (*ctx_buffer_output)(nft_ctx* ctx) = nullptr;
  const char* (*ctx_get_output_buffer)(nft_ctx* ctx) = nullptr;
  int (*ctx_buffer_error)(nft_ctx* ctx) = nullptr;
  const char* (*ctx_get_error_buffer)(nft_ctx* ctx) = nullptr;
  void (*ctx_output_set_flags)(nft_ctx* ctx, unsigned int flags) = nullptr;
};

// dlopen()s `soname` and resolves every entry point. Throws cni::Error(kNatFailure,
// "libnftables is not available: <dlerror>") when the library or a symbol is missing.
// The library is never closed (its handle is owned by the returned table for the process lifetime).
NftApi LoadNftApi(const std::string& soname);
// LoadNftApi("libnftables.so.1"), done once per process; later calls return the same table.
// A failed load is retried by the next call.
const NftApi& Nftables();

// One libnftables context acting in the namespace the thread was in at construction.
class NftContext {
 public:
  // Throws cni::Error(kNatFailure) when libnftables is not available or nft_ctx_new fails.
  NftContext();

  // Runs `commands` (nft syntax, several commands separated by newlines: one transaction).
  // Throws cni::Error(kNatFailure, <what> + ": " + first error line, error buffer + commands).
  void Run(const std::string& commands, const std::string& what);
  // Runs a list command with JSON and handle output and returns the output text; on failure
  // returns false and leaves the error text in *error.
  bool ListJson(const std::string& command, std::string* out, std::string* error);

 private:
  struct Free {
    void (*free_fn)(nft_ctx*) = nullptr;
    void operator()(nft_ctx* c) const noexcept {
      if (c != nullptr) free_fn(c);
    }
  };
  const NftApi& api_;
  std::unique_ptr<nft_ctx, Free> ctx_;
};

}  // namespace netiface::nat
