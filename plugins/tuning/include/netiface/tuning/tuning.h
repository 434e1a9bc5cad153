// The tuning plugin's verbs over Ops (ops.h). A chained plugin: ADD needs prevResult and returns it, with
// the container interface's MAC replaced when it sets one. main.cc hands Funcs() to cni::PluginMain.
#pragma once

#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"
#include "netiface/tuning/ops.h"

namespace netiface::tuning {

// ADD: validates everything and reads the current values first (a missing link or sysctl fails before
// any change), saves them (the backup file), then writes the sysctls, the MAC, promisc, the MTU,
// allmulti and txQLen in that order. A failure puts every value back and removes the backup it wrote.
cni::Result Add(const cni::CmdArgs& args, Ops& ops);
// DEL: restores what the backup holds and removes it. No backup, or no namespace or link to restore
// (they are gone with the container): removes the backup and succeeds. A restore that fails keeps the
// backup for the next DEL and reports the error.
void Del(const cni::CmdArgs& args, Ops& ops);
// CHECK: the sysctls and the link's attributes are what the config says; reports every difference.
void Check(const cni::CmdArgs& args, Ops& ops);

cni::PluginFuncs Funcs();

}  // namespace netiface::tuning
