// Verbs that must do every step and report every failure (DEL, GC): each step runs through
// ErrorList::Run, which logs a failure and keeps going; ThrowIfAny then raises one Error with the first
// failure's code and details and every message.
#pragma once

#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "netiface/cni/error.h"
#include "netiface/cni/join.h"
#include "netiface/cni/log.h"

namespace netiface::cni {

class ErrorList {
 public:
  // `log_prefix` starts each logged failure (e.g. "veth-workload: ").
  explicit ErrorList(std::string log_prefix = {}) : log_prefix_(std::move(log_prefix)) {}

  template <typename F>
  void Run(std::string_view step, F&& f) {
    try {
      f();
    } catch (const Error& e) {
      Add(e.code(), std::string(step) + ": " + e.msg(), e.details());
    } catch (const std::exception& e) {
      Add(kInternal, std::string(step) + ": " + e.what());
    }
  }
  void Add(int code, std::string msg, const std::string& details = {}) {
    log::Error("{}{}", log_prefix_, msg);
    if (messages_.empty()) {
      code_ = code;
      details_ = details;
    }
    messages_.push_back(std::move(msg));
  }
  bool empty() const { return messages_.empty(); }
  // Throws Error(first code, "<prefix>: m1; m2; ...", first details) when a step failed.
  void ThrowIfAny(std::string_view prefix) const {
    if (messages_.empty()) return;
    throw Error(code_, std::string(prefix) + ": " + JoinMessages(messages_), details_);
  }

 private:
  std::string log_prefix_;
  int code_ = 0;
  std::string details_;
  std::vector<std::string> messages_;
};

}  // namespace netiface::cni
