// The real Ops: libnetlink in CNI_NETNS. One per verb call (cni::BindVerbs).
#pragma once

#include <optional>

#include "netiface/cni/skel.h"
#include "netiface/loopback/ops.h"
#include "netiface/netlink/netns.h"
#include "netiface/netlink/socket.h"

namespace netiface::loopback {

class KernelOps : public Ops {
 public:
  // Opens nothing yet. `args` must outlive this object.
  explicit KernelOps(const cni::CmdArgs& args) : args_(args) {}

  Observed Observe() override;
  void SetUp() override;
  bool SetDown() override;

 private:
  // The namespace's socket, opened once; nullptr when CNI_NETNS is empty or gone.
  nl::Socket* Container();
  nl::Socket& RequireContainer();

  const cni::CmdArgs& args_;
  bool opened_ = false;
  std::optional<nl::Socket> sock_;
};

}  // namespace netiface::loopback
