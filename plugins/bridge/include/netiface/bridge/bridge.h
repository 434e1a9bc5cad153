// The bridge plugin's verbs. Every function acts with the calling thread's network namespace as the host
// (where the bridge lives) and args.netns as the container's. main.cc hands Funcs() to cni::PluginMain.
#pragma once

#include <functional>
#include <string_view>

#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"

namespace netiface::bridge {

// Called with the name of each ADD step just before it runs: "ipam" (start), "bridge", "veth",
// "addresses" (the IPAM result), "container", "gateway", "masq", "wait", "answer" (the result rendered at the
// request's version). A hook that throws makes that step fail (the fault-injection seam the rollback tests
// use); production passes none.
using StepHook = std::function<void(std::string_view step)>;

// ADD: IPAM ADD started; while it runs, bridge (created or reused) up, veth pair with the container end
// created directly in the netns, host end enslaved; then the IPAM result, container addresses and routes, gateway on the bridge, masquerade, host end
// oper-up. Result interfaces are [bridge, host veth, container], ips point at the container (index 2).
// On any failure everything this ADD made is undone (the bridge and its gateway address stay: shared).
cni::Result Add(const cni::CmdArgs& args, const StepHook& hook = {});
// DEL: deletes the container link (already gone is fine), releases IPAM (also without CNI_NETNS) and
// removes masquerade rules; does every step and throws one error listing every failure.
void Del(const cni::CmdArgs& args);
// CHECK against prevResult: IPAM CHECK, bridge, container veth and its enslaved host peer, addresses,
// routes, masquerade rules. Throws cni::Error listing every mismatch.
void Check(const cni::CmdArgs& args);
// STATUS: forwarded to IPAM.
void Status(const cni::CmdArgs& args);
// GC: forwarded to IPAM; masquerade rules of attachments not in the valid list are removed.
void Gc(const cni::CmdArgs& args);

cni::PluginFuncs Funcs();

}  // namespace netiface::bridge
