// CHECK: one read of every configured value, compared with the config by a pure function (plan.h).
#include <map>

#include "netiface/cni/error.h"
#include "netiface/cni/join.h"
#include "netiface/tuning/tuning.h"

namespace netiface::tuning {

void Check(const cni::CmdArgs& args, Ops& ops) {
  const Config c = ParseConfig(args.conf, args.args, args.ifname);
  if (!args.conf.prev_result) {
    throw cni::Error(cni::kInvalidConfig, "tuning: must be called as a chained plugin (prevResult is missing)");
  }
  if (!ops.NetnsExists()) throw cni::Error(cni::kInvalidEnv, "tuning: network namespace not found", args.netns);
  const std::optional<LinkState> link = ops.ReadLink(args.ifname);
  if (!link) throw cni::Error(cni::kInternal, "tuning: cannot find container link " + args.ifname);
  std::map<std::string, std::optional<std::string>> sysctls;
  for (const auto& [path, value] : c.sysctls) sysctls[path] = ops.ReadSysctl(path);
  const std::vector<std::string> problems = Compare(c, *link, sysctls);
  if (!problems.empty()) throw cni::Error(cni::kInternal, "tuning CHECK failed: " + cni::JoinMessages(problems));
}

}  // namespace netiface::tuning
