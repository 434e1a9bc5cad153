// The loopback plugin's verbs, written over Ops (ops.h), and the pure functions they are made of.
// CNI_IFNAME is ignored, as by the reference: the plugin only ever touches "lo".
#pragma once

#include <string>
#include <vector>

#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"
#include "netiface/loopback/ops.h"

namespace netiface::loopback {

inline constexpr const char* kLoopbackName = "lo";
inline constexpr const char* kLoopbackMac = "00:00:00:00:00:00";

// ADD: lo up (undone on a failure when it was down before). The result is prevResult unchanged when
// there is one, else MakeResult of lo as it is then.
cni::Result Add(const cni::CmdArgs& args, Ops& ops);
// DEL: lo down; nothing to do without CNI_NETNS or when the namespace is gone.
void Del(const cni::CmdArgs& args, Ops& ops);
// CHECK: one Observe() compared by CompareLoopback; throws cni::Error(kInternal) listing every mismatch.
void Check(const cni::CmdArgs& args, Ops& ops);

// Go's net.IP.IsLoopback: 127.0.0.0/8 (also v4-mapped) and ::1.
bool IsLoopback(const cni::IpAddr& a);

// The reference's result: interface "lo" (MAC all zeros, sandbox `netns`) and the first address of each
// family on it. Throws cni::Error(kInternal) when lo carries a non-loopback address.
cni::Result MakeResult(const Observed& o, const std::string& netns);

// CHECK's comparison (pure): lo must be up and carry loopback addresses only, among them every
// address `prev` reports for an interface "lo" in `netns`. One description per mismatch.
std::vector<std::string> CompareLoopback(const Observed& o, const std::optional<cni::Result>& prev,
                                         const std::string& netns);

cni::PluginFuncs Funcs();

}  // namespace netiface::loopback
