// DEL and GC do every step and report every failure: steps run through ErrorList::Run, which keeps
// going, and ThrowIfAny raises one cni::Error with the first failure's code and all the messages.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "netiface/cni/error.h"
#include "netiface/cni/log.h"

namespace netiface::veth_workload {

class ErrorList {
 public:
  template <typename F>
  void Run(std::string_view step, F&& f) {
    try {
      f();
    } catch (const cni::Error& e) {
      Add(e.code(), std::string(step) + ": " + e.what());
    } catch (const std::exception& e) {
      Add(cni::kInternal, std::string(step) + ": " + e.what());
    }
  }
  void Add(int code, std::string msg) {
    log::Error("veth-workload: {}", msg);
    if (messages_.empty()) code_ = code;
    messages_.push_back(std::move(msg));
  }
  bool empty() const { return messages_.empty(); }
  // REQUIRES: nothing. Throws cni::Error(first code, "<prefix>: m1; m2; ...") when a step failed.
  void ThrowIfAny(std::string_view prefix) const {
    if (messages_.empty()) return;
    std::string msg(prefix);
    msg += ": ";
    for (size_t i = 0; i < messages_.size(); ++i) msg += (i ? "; " : "") + messages_[i];
    throw cni::Error(code_, msg);
  }

 private:
  int code_ = 0;
  std::vector<std::string> messages_;
};

}  // namespace netiface::veth_workload
