// The bridge plugin's verbs, written over Ops (ops.h): KernelOps acts with the calling thread's network
// namespace as the host (where the bridge lives) and args.netns as the container's. main.cc hands
// Funcs() to cni::PluginMain.
#pragma once

#include <string>
#include <vector>

#include "netiface/bridge/config.h"
#include "netiface/bridge/ops.h"
#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"

namespace netiface::bridge {

// ADD: IPAM ADD started; while it runs, bridge (created or reused) up, veth pair with the container end
// created directly in the netns, host end enslaved; then the IPAM result, container addresses and
// routes, gateway on the bridge, masquerade, host end oper-up. Result interfaces are [bridge, host veth,
// container], ips point at the container (index 2). On any failure everything this ADD made is undone
// (the bridge and its gateway address stay: shared).
cni::Result Add(const cni::CmdArgs& args, Ops& ops);
// DEL: deletes the container link (already gone is fine), releases IPAM (also without CNI_NETNS) and
// removes masquerade rules; does every step and throws one error listing every failure.
void Del(const cni::CmdArgs& args, Ops& ops);
// CHECK against prevResult: IPAM CHECK, then one Observe() compared by CompareAttachment. Throws
// cni::Error(kInternal) listing every mismatch.
void Check(const cni::CmdArgs& args, Ops& ops);
// STATUS: forwarded to IPAM.
void Status(const cni::CmdArgs& args, Ops& ops);
// GC: forwarded to IPAM; masquerade rules of attachments not in the valid list are removed.
void Gc(const cni::CmdArgs& args, Ops& ops);

// CHECK's comparison (pure): every way `o` differs from what `prev` (an ADD result for `ifname`) and
// the config say, one description each; empty when the attachment is intact. REQUIRES: prev has a
// sandbox interface named ifname.
std::vector<std::string> CompareAttachment(const Config& c, const cni::Result& prev, const std::string& ifname,
                                           const Observed& o);

cni::PluginFuncs Funcs();

}  // namespace netiface::bridge
