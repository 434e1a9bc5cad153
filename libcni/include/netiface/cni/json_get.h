// Optional keys of a config object (a plugin's network config, its ipam section, args, runtimeConfig):
// absent and null both mean "not set", as the reference's Go structs read them. The type check is
// here once; the error is the caller's (each config keeps its own message shape), or the shape the
// plugins share: Error(kInvalidConfig, "<owner>: \"<path>\" <what>", <the value as JSON>). Header-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "netiface/cni/error.h"

namespace netiface::cni {

// obj[key] when it is set, nullptr when absent or null (or when obj is not an object).
inline const nlohmann::json* FindSet(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

// Error(kInvalidConfig, "<owner>: \"<path>\" <what>", value.dump()); details are "" for a null value.
[[noreturn]] inline void ThrowInvalidValue(std::string_view owner, std::string_view path, std::string_view what,
                                           const nlohmann::json& value) {
  throw Error(kInvalidConfig, std::string(owner) + ": \"" + std::string(path) + "\" " + std::string(what),
              value.is_null() ? std::string() : value.dump());
}

namespace internal {
template <typename T>
bool HasType(const nlohmann::json& v) {
  if constexpr (std::is_same_v<T, bool>) return v.is_boolean();
  if constexpr (std::is_same_v<T, std::string>) return v.is_string();
  if constexpr (std::is_same_v<T, int64_t>) return v.is_number_integer();
}
template <typename T>
const char* TypeName() {
  if constexpr (std::is_same_v<T, bool>) return "must be a boolean";
  if constexpr (std::is_same_v<T, std::string>) return "must be a string";
  if constexpr (std::is_same_v<T, int64_t>) return "must be an integer";
}
}  // namespace internal

// obj[key] as T (bool, std::string or int64_t), nullopt when not set. A value of another type is
// passed to wrong_type(value), which must throw the caller's error.
template <typename T, typename WrongType>
std::optional<T> GetOptional(const nlohmann::json& obj, std::string_view key, WrongType&& wrong_type) {
  static_assert(std::is_same_v<T, bool> || std::is_same_v<T, std::string> || std::is_same_v<T, int64_t>);
  const nlohmann::json* v = FindSet(obj, key);
  if (!v) return std::nullopt;
  if (!internal::HasType<T>(*v)) {
    wrong_type(*v);
    throw Error(kInternal, "GetOptional: wrong_type returned");  // unreachable when wrong_type throws
  }
  return v->get<T>();
}

// The same with the shared error shape: "<owner>: \"<path>\" must be a boolean|string|an integer".
template <typename T>
std::optional<T> GetOptional(const nlohmann::json& obj, std::string_view key, std::string_view owner,
                             std::string_view path) {
  return GetOptional<T>(obj, key,
                        [&](const nlohmann::json& v) { ThrowInvalidValue(owner, path, internal::TypeName<T>(), v); });
}

}  // namespace netiface::cni
