// CHECK: observe the rules once, compare as a pure function.
#include "netiface/cni/error.h"
#include "netiface/cni/join.h"
#include "netiface/portmap/config.h"
#include "netiface/portmap/portmap.h"

namespace netiface::portmap {

std::vector<std::string> CompareRules(const Observed& o) {
  std::vector<std::string> problems;
  for (const auto& m : o.missing_rules) problems.push_back("missing rule " + m);
  return problems;
}

void Check(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf);
  if (!args.conf.prev_result) {
    throw cni::Error(cni::kInvalidConfig, "portmap: must be called as a chained plugin (no prevResult)");
  }
  if (c.mappings.empty()) return;
  const auto addrs = ContainerAddrs(*args.conf.prev_result, args.ifname);
  if (addrs.empty()) {
    throw cni::Error(cni::kInvalidConfig, "portmap: prevResult has no address of interface " + args.ifname);
  }
  auto problems = CompareRules(ops.Observe(MakeSpec(c, args.container_id, args.ifname, addrs)));
  if (!problems.empty()) throw cni::Error(cni::kNatFailure, "portmap: " + cni::JoinMessages(problems));
}

}  // namespace netiface::portmap
