// The firewall plugin's verbs over Ops (ops.h). A chained plugin: ADD passes prevResult through.
// main.cc hands Funcs() to cni::PluginMain.
#pragma once

#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"
#include "netiface/firewall/ops.h"

namespace netiface::firewall {

// ADD: needs prevResult; installs the attachment's accepts (and isolation) in one transaction.
cni::Result Add(const cni::CmdArgs& args, Ops& ops);
// DEL: removes the attachment's rules by tag (no prevResult needed). Idempotent.
void Del(const cni::CmdArgs& args, Ops& ops);
// CHECK: every planned rule is in place; reports the missing ones.
void Check(const cni::CmdArgs& args, Ops& ops);
// GC: removes the rules of the network's attachments that are not in cni.dev/valid-attachments.
void Gc(const cni::CmdArgs& args, Ops& ops);

cni::PluginFuncs Funcs();

}  // namespace netiface::firewall
