// The bandwidth plugin's verbs over Ops (ops.h). A chained plugin: ADD passes prevResult through (with
// the ifb appended when egress is shaped). main.cc hands Funcs() to cni::PluginMain.
#pragma once

#include <string>
#include <vector>

#include "netiface/bandwidth/ops.h"
#include "netiface/bandwidth/plan.h"
#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"

namespace netiface::bandwidth {

// ADD: needs prevResult. With nothing to shape, returns it unchanged. Else finds the host end (the
// prevResult interface without a sandbox that is the veth peer of CNI_IFNAME), then: tbf on the host
// end (ingress); the ifb, the ingress qdisc on the host end, the u32 redirect to the ifb, tbf on the
// ifb (egress). A failure undoes every step.
cni::Result Add(const cni::CmdArgs& args, Ops& ops);
// DEL: deletes the ifb, and the plugin's qdiscs on the host end when it is still there. Idempotent.
void Del(const cni::CmdArgs& args, Ops& ops);
// CHECK: the qdiscs, the ifb and the redirect present with the configured parameters.
void Check(const cni::CmdArgs& args, Ops& ops);

// The prevResult interface that is `peer` (no sandbox, same name). Throws Error(kInvalidConfig).
void RequireInPrevResult(const cni::Result& prev, const std::string& peer);
// CHECK's comparison (pure): every way `o` differs from the plan, one description each.
std::vector<std::string> Compare(const Config& c, double ticks_per_usec, const std::string& ifb_name,
                                 const Observed& o);

cni::PluginFuncs Funcs();

}  // namespace netiface::bandwidth
