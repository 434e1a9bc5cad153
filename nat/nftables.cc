#include "nftables.h"

#include <dlfcn.h>

#include <optional>
#include <string_view>

#include "netiface/cni/error.h"

namespace netiface::nat {
namespace {

// Output flags of libnftables.h (NFT_CTX_OUTPUT_HANDLE, NFT_CTX_OUTPUT_JSON): the header is not
// included so that nothing links against libnftables by accident.
constexpr unsigned int kOutputHandle = 1u << 3;
constexpr unsigned int kOutputJson = 1u << 4;

[[noreturn]] void Unavailable(const std::string& why) {
  throw cni::Error(cni::kNatFailure, "libnftables is not available: " + why);
}

template <typename Fn>
void Resolve(void* handle, const char* name, Fn* fn) {
  void* sym = ::dlsym(handle, name);
  if (sym == nullptr) {
    const char* e = ::dlerror();
    Unavailable(e != nullptr ? e : std::string("missing symbol ") + name);
  }
  *fn = reinterpret_cast<Fn>(sym);
}

std::string FirstLine(std::string_view s) {
  auto nl = s.find('\n');
  return std::string(nl == std::string_view::npos ? s : s.substr(0, nl));
}

}  // namespace

NftApi LoadNftApi(const std::string& soname) {
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    Unavailable(e != nullptr ? e : soname);
  }
  NftApi api;
  try {
    Resolve(handle, "nft_ctx_new", &api.ctx_new);
    Resolve(handle, "nft_ctx_free", &api.ctx_free);
    Resolve(handle, "nft_run_cmd_from_buffer", &api.run_cmd_from_buffer);
    Resolve(handle, "nft_ctx_buffer_output", &api.ctx_buffer_output);
    Resolve(handle, "nft_ctx_get_output_buffer", &api.ctx_get_output_buffer);
    Resolve(handle, "nft_ctx_buffer_error", &api.ctx_buffer_error);
    Resolve(handle, "nft_ctx_get_error_buffer", &api.ctx_get_error_buffer);
    Resolve(handle, "nft_ctx_output_set_flags", &api.ctx_output_set_flags);
  } catch (...) {
    ::dlclose(handle);
    throw;
  }
  return api;
}

const NftApi& Nftables() {
  static std::optional<NftApi> api;
  if (!api) api = LoadNftApi("libnftables.so.1");
  return *api;
}

NftContext::NftContext() : api_(Nftables()), ctx_(nullptr, Free{api_.ctx_free}) {
  ctx_.reset(api_.ctx_new(0));  // NFT_CTX_DEFAULT
  if (!ctx_) throw cni::Error(cni::kNatFailure, "nft_ctx_new failed");
  if (api_.ctx_buffer_output(ctx_.get()) != 0 || api_.ctx_buffer_error(ctx_.get()) != 0) {
    throw cni::Error(cni::kNatFailure, "cannot buffer libnftables output");
  }
}

void NftContext::Run(const std::string& commands, const std::string& what) {
  api_.ctx_output_set_flags(ctx_.get(), 0);
  if (api_.run_cmd_from_buffer(ctx_.get(), commands.c_str()) == 0) return;
  std::string error = api_.ctx_get_error_buffer(ctx_.get());
  throw cni::Error(cni::kNatFailure, what + ": " + FirstLine(error), error + "\ncommands:\n" + commands);
}

bool NftContext::ListJson(const std::string& command, std::string* out, std::string* error) {
  api_.ctx_output_set_flags(ctx_.get(), kOutputJson | kOutputHandle);
  bool ok = api_.run_cmd_from_buffer(ctx_.get(), command.c_str()) == 0;
  *out = api_.ctx_get_output_buffer(ctx_.get());
  *error = api_.ctx_get_error_buffer(ctx_.get());
  return ok;
}

}  // namespace netiface::nat
