// veth-workload's verbs: a routed veth pair per workload, no bridge; the host routes each workload
// address to its host veth and the workload reaches everything through the link-local gateway
// 169.254.1.1 (IPv6: the host veth's link-local address) answered by proxy ARP/NDP (Calico's
// dataplane, without its datastore). Every side effect goes through Ops.
#pragma once

#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"
#include "netiface/veth_workload/ops.h"

namespace netiface::veth_workload {

// Validates everything, then IPAM ADD (or args.cni.ipAddrsNoIpam), removes a stale host veth of the
// same name, creates and configures the pair, installs NAT rules, writes the endpoint record. Any
// failure undoes every step taken, IPAM included, and rethrows.
cni::Result Add(const cni::CmdArgs& args, Ops& ops);
// Deletes the container interface (a gone namespace or link is success; without CNI_NETNS the host
// veth of the attachment's own record), always IPAM DEL, NAT removal, then the endpoint record when
// it belongs to this container and everything else succeeded. Every step runs; all failures are
// reported together.
void Del(const cni::CmdArgs& args, Ops& ops);
// IPAM CHECK, then the kernel state, the endpoint record and (with NAT) the nftables rules against
// prevResult and the config. Throws cni::Error listing every difference.
void Check(const cni::CmdArgs& args, Ops& ops);
// Forwards to IPAM.
void Status(const cni::CmdArgs& args, Ops& ops);
// Forwards to IPAM, removes the endpoint records (and their NAT rules) of attachments not in the
// valid list. Without a valid list the records are kept.
void Gc(const cni::CmdArgs& args, Ops& ops);

// The verbs bound to KernelOps, for cni::PluginMain.
cni::PluginFuncs Funcs();
cni::PluginInfo Info();

}  // namespace netiface::veth_workload
