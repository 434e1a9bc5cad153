// The portmap verbs over Ops, and the verb table.
#pragma once

#include <string>
#include <vector>

#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"
#include "netiface/portmap/ops.h"

namespace netiface::portmap {

cni::Result Add(const cni::CmdArgs& args, Ops& ops);
void Del(const cni::CmdArgs& args, Ops& ops);
void Check(const cni::CmdArgs& args, Ops& ops);
void Gc(const cni::CmdArgs& args, Ops& ops);

// CHECK's comparison: what is wrong, empty when nothing.
std::vector<std::string> CompareRules(const Observed& o);

cni::PluginFuncs Funcs();

}  // namespace netiface::portmap
