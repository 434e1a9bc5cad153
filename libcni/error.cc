#include "netiface/cni/error.h"

#include <cstring>
#include <utility>

namespace netiface::cni {

Error::Error(int code, std::string msg, std::string details)
    : std::runtime_error(details.empty() ? msg : msg + "; " + details),
      code_(code),
      msg_(std::move(msg)),
      details_(std::move(details)) {}

Error Error::FromErrno(int code, int err, const std::string& msg, std::string details) {
  Error e(code, msg + ": " + std::strerror(err), std::move(details));
  e.sys_errno_ = err;
  return e;
}

nlohmann::json Error::ToJson(const std::string& cni_version) const {
  nlohmann::json j = nlohmann::json::object();
  if (!cni_version.empty()) j["cniVersion"] = cni_version;
  j["code"] = code_;
  j["msg"] = msg_;
  if (!details_.empty()) j["details"] = details_;
  return j;
}

Error Error::FromJson(const nlohmann::json& j, const std::string& fallback_msg) {
  if (!j.is_object()) return Error(kDelegateFailed, fallback_msg);
  auto code = j.find("code");
  auto msg = j.find("msg");
  if (code == j.end() || !code->is_number_integer() || msg == j.end() || !msg->is_string()) {
    return Error(kDelegateFailed, fallback_msg, j.dump());
  }
  std::string details;
  if (auto d = j.find("details"); d != j.end() && d->is_string()) details = d->get<std::string>();
  return Error(code->get<int>(), msg->get<std::string>(), std::move(details));
}

}  // namespace netiface::cni
