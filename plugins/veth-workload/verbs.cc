#include "netiface/cni/verbs.h"

#include <algorithm>
#include <memory>

#include "netiface/cni/error.h"
#include "netiface/cni/error_list.h"
#include "netiface/cni/join.h"
#include "netiface/cni/log.h"
#include "netiface/veth_workload/check.h"
#include "netiface/veth_workload/kernel_ops.h"
#include "netiface/veth_workload/naming.h"
#include "netiface/veth_workload/veth_workload.h"

namespace netiface::veth_workload {
namespace {

// The request's addresses bypassed IPAM (nothing is reserved for it there).
bool BypassesIpam(const Config& c, const cni::NetConf& conf) {
  if (!c.feature_ip_addrs_no_ipam) return false;
  auto cni = conf.args.find("cni");
  return cni != conf.args.end() && cni->is_object() && cni->contains("ipAddrsNoIpam") &&
         !(*cni)["ipAddrsNoIpam"].is_null();
}

}  // namespace

void Check(const cni::CmdArgs& args, Ops& ops) {
  Config c = ParseConfig(args.conf);
  Identity id = ParseIdentity(args, ResolveNodename(c));
  if (!args.conf.prev_result) throw cni::Error(cni::kInvalidConfig, "veth-workload: CHECK needs a prevResult");
  CheckExpectation expect = ExpectFromPrevResult(c, id, *args.conf.prev_result, args.netns);

  if (!BypassesIpam(c, args.conf)) ops.IpamCheck();

  std::vector<std::string> keys;
  for (const auto& s : expect.host_sysctls) keys.push_back(s.key);
  const Observed observed = ops.Observe(expect.host_veth, id.ifname, keys);
  std::vector<std::string> problems = CompareState(expect, observed);

  std::string folder = RecordFolder(id);
  std::optional<EndpointRecord> record = ops.ReadRecord(folder, EndpointName(id));
  if (!record || record->container_id != id.container_id) {
    problems.push_back("endpoint record " + folder + "/" + EndpointName(id) + " of container " + id.container_id +
                       " is missing");
  } else {
    if (record->host_veth != expect.host_veth) {
      problems.push_back("endpoint record names host veth " + record->host_veth + ", expected " + expect.host_veth);
    }
    if (c.ip_masq && record->masquerade.empty())
      problems.push_back("ipMasq is on but the attachment has no masquerade");
    if (record->HasNat()) {
      try {
        ops.NatVerify(NatSpecOf(*record));
      } catch (const cni::Error& e) {
        problems.push_back(e.what());
      }
    }
  }
  if (problems.empty()) return;
  const std::string msg = "veth-workload CHECK: " + cni::JoinMessages(problems);
  // A gone sandbox is "container unknown"; any other difference is reported as the reference
  // plugins' CHECK failures are (999).
  int code = (!observed.netns_exists || !observed.container_link) ? cni::kUnknownContainer : cni::kInternal;
  throw cni::Error(code, msg);
}

void Status(const cni::CmdArgs& args, Ops& ops) {
  ParseConfig(args.conf);
  ops.IpamStatus();
}

void Gc(const cni::CmdArgs& args, Ops& ops) {
  Config c = ParseConfig(args.conf);
  cni::ErrorList errors("veth-workload: ");
  errors.Run("IPAM GC", [&] { ops.IpamGc(); });
  if (!args.conf.valid_attachments) {
    log::Warn("veth-workload GC: no valid-attachments list, keeping every endpoint record");
  } else {
    const std::vector<cni::Attachment>& valid = *args.conf.valid_attachments;
    std::vector<EndpointRecord> removed;
    std::vector<std::string> store_errors;
    errors.Run("endpoint records", [&] { removed = ops.RemoveStaleRecords(valid, store_errors); });
    for (auto& e : store_errors) errors.Add(cni::kIoFailure, std::move(e));
    for (const auto& r : removed) {
      log::Info("veth-workload GC: removed endpoint record {} of container {}", r.name, r.container_id);
      if (r.HasNat()) errors.Run("remove NAT rules of " + r.name, [&] { ops.NatRemove(NatSpecOf(r).tag); });
    }
    if (c.ip_masq || c.feature_floating_ips) errors.Run("NAT GC", [&] { ops.NatGc(c.network, valid); });
  }
  errors.ThrowIfAny("veth-workload GC");
}

cni::PluginFuncs Funcs() {
  return cni::BindVerbs<Ops>([](const cni::CmdArgs& a) { return std::make_unique<KernelOps>(a); },
                             {.add = Add, .del = Del, .check = Check, .status = Status, .gc = Gc});
}

cni::PluginInfo Info() { return {.about = "veth-workload: routed veth pairs with a link-local gateway (netiface)"}; }

}  // namespace netiface::veth_workload
