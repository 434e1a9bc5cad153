// What the harnesses share. A parser of outside input may reject its input only with the error it
// documents (cni::Error, or an exception of nlohmann::json's for a parse it hands through); anything
// else, a crash, a leak or undefined behaviour, is a finding. libFuzzer calls LLVMFuzzerTestOneInput.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "netiface/cni/error.h"

namespace netiface::fuzz {

inline std::string_view Bytes(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// Runs `f`, swallowing the documented rejections: cni::Error, nlohmann::json's exceptions, and the
// error type `Also` a parser of another layer documents (agent::ConfigError, etcd::Error, ...).
struct NoOtherError {};
template <typename Also = NoOtherError, typename F>
void Rejects(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const cni::Error&) {
  } catch (const nlohmann::json::exception&) {
  } catch (const Also&) {
  }
}

// The input as JSON, or a discarded value when it is not JSON.
inline nlohmann::json Json(std::string_view text) { return nlohmann::json::parse(text, nullptr, false); }

// Splits "first\0second" (or all of it as the first part when there is no NUL).
inline std::pair<std::string_view, std::string_view> Split(std::string_view s) {
  auto nul = s.find('\0');
  if (nul == std::string_view::npos) return {s, {}};
  return {s.substr(0, nul), s.substr(nul + 1)};
}

}  // namespace netiface::fuzz
