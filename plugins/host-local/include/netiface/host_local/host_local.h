// The host-local IPAM plugin: config- and disk-compatible with the reference host-local (v1.1.1), with
// spec 1.1 STATUS and GC, a bounded lock wait and an owner index that keeps ADD and DEL flat in the
// number of reservations. Each verb takes the network folder's lock for its whole duration.
#pragma once

#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"

namespace netiface::host_local {

// One address per range set (requested ones first matched to their set), routes from ipam.routes, dns
// from ipam.resolvConf. Everything reserved by a failing ADD is released again.
cni::Result Add(const cni::CmdArgs& args);
// Releases every reservation of (CNI_CONTAINERID, CNI_IFNAME) (legacy container-ID-only files when there
// is none). Idempotent; needs no netns and only ipam.dataDir/lockTimeoutMs from the config.
void Del(const cni::CmdArgs& args);
// Fails unless the attachment holds an address in every range set and, when prevResult is given, the
// addresses of prevResult that lie in the range sets are exactly those it holds.
void Check(const cni::CmdArgs& args);
// Error(kNotAvailable) when the data folder is unusable or a range set has no free address.
void Status(const cni::CmdArgs& args);
// Releases every reservation not owned by a valid attachment (gc.h).
void Gc(const cni::CmdArgs& args);

cni::PluginFuncs Funcs();

}  // namespace netiface::host_local
