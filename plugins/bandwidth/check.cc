// CHECK: one Observe, compared with the plan by a pure function.
#include <linux/if_ether.h>
#include <linux/pkt_sched.h>

#include <algorithm>

#include <fmt/format.h>

#include "netiface/bandwidth/bandwidth.h"
#include "netiface/cni/error.h"
#include "netiface/cni/join.h"

namespace netiface::bandwidth {
namespace {

std::string Describe(const nl::TbfParams& p) {
  return fmt::format("rate {} B/s, buffer {} ticks, limit {} B", p.rate_bytes, p.buffer_ticks, p.limit_bytes);
}

void CompareRootTbf(const std::vector<nl::QdiscInfo>& qdiscs, const nl::TbfParams& want, const std::string& where,
                    std::vector<std::string>& out) {
  auto it = std::find_if(qdiscs.begin(), qdiscs.end(), [](const nl::QdiscInfo& q) { return q.parent == TC_H_ROOT; });
  if (it == qdiscs.end() || it->kind != "tbf") {
    out.push_back("no tbf root qdisc on " + where);
  } else if (!it->tbf || !(*it->tbf == want)) {
    out.push_back(
        fmt::format("tbf on {} is {}, want {}", where, it->tbf ? Describe(*it->tbf) : "unreadable", Describe(want)));
  }
}

}  // namespace

std::vector<std::string> Compare(const Config& c, double ticks_per_usec, const std::string& ifb_name,
                                 const Observed& o) {
  std::vector<std::string> out;
  if (c.ingress.active()) CompareRootTbf(o.host_qdiscs, PlanTbf(c.ingress, ticks_per_usec), "the host end", out);
  if (c.egress.active()) {
    if (!o.ifb) {
      out.push_back("ifb " + ifb_name + " is missing");
    } else {
      if (o.ifb->kind != "ifb") out.push_back("link " + ifb_name + " is not an ifb");
      CompareRootTbf(o.ifb_qdiscs, PlanTbf(c.egress, ticks_per_usec), ifb_name, out);
    }
    bool ingress = std::any_of(o.host_qdiscs.begin(), o.host_qdiscs.end(),
                               [](const nl::QdiscInfo& q) { return q.kind == "ingress"; });
    if (!ingress) out.push_back("no ingress qdisc on the host end");
    bool redirect = o.ifb && std::any_of(o.host_filters.begin(), o.host_filters.end(), [&](const auto& f) {
                      return f.kind == "u32" && f.protocol == ETH_P_ALL &&
                             std::find(f.egress_redirect_to.begin(), f.egress_redirect_to.end(), o.ifb->index) !=
                                 f.egress_redirect_to.end();
                    });
    if (!redirect) out.push_back("no u32 filter redirecting the host end's ingress to " + ifb_name);
  }
  return out;
}

void Check(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  if (!args.conf.prev_result) throw cni::Error(cni::kInvalidConfig, "must be called as a chained plugin");
  if (!c.ingress.active() && !c.egress.active()) return;
  const std::optional<nl::LinkInfo> host = ops.HostPeer(args.ifname);
  if (!host) throw cni::Error(cni::kInvalidEnv, "container interface " + args.ifname + " has no veth peer in the host");
  RequireInPrevResult(*args.conf.prev_result, host->name);
  const std::string ifb = IfbName(c.network, args.container_id);
  const std::vector<std::string> problems = Compare(c, ops.TicksPerUsec(), ifb, ops.Observe(host->index, ifb));
  if (!problems.empty()) throw cni::Error(cni::kInternal, "bandwidth CHECK failed: " + cni::JoinMessages(problems));
}

}  // namespace netiface::bandwidth
