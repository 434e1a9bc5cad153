#include "error_list.h"
#include "netiface/cni/error.h"
#include "netiface/cni/log.h"
#include "netiface/veth_workload/naming.h"
#include "netiface/veth_workload/veth_workload.h"

namespace netiface::veth_workload {

void Del(const cni::CmdArgs& args, Ops& ops) {
  Config c = ParseConfig(args.conf);
  ErrorList errors;

  // The record needs the identity; without it (a node name that cannot be resolved any more, bad
  // CNI_ARGS) the kernel and IPAM steps still run.
  std::optional<Identity> id;
  errors.Run("identity", [&] { id = ParseIdentity(args, ResolveNodename(c)); });
  std::optional<EndpointRecord> record;
  std::string folder, name;
  if (id) {
    folder = id->IsK8s() ? id->pod_namespace : "_cni";
    name = EndpointName(*id);
    errors.Run("read endpoint record", [&] { record = ops.ReadRecord(folder, name); });
  }
  // Only a record with this container ID is this attachment's (a newer sandbox of the same pod
  // replaces it, and then its host veth is not ours).
  const bool owned = record && record->container_id == args.container_id && record->ifname == args.ifname;

  errors.Run("delete interface", [&] {
    bool deleted = !args.netns.empty() && ops.DeleteContainerLink(args.ifname);
    if (!deleted && owned) ops.DeleteHostVeth(record->host_veth);
  });
  errors.Run("IPAM DEL", [&] { ops.IpamDel(); });
  if (c.ip_masq || c.feature_floating_ips || (owned && record->HasNat())) {
    errors.Run("remove NAT rules", [&] { ops.NatRemove({c.network, args.container_id, args.ifname}); });
  }
  // Kept while anything failed: it is what a retry or GC needs.
  if (id && errors.empty()) {
    errors.Run("remove endpoint record", [&] { ops.RemoveRecord(folder, name, args.container_id); });
  }
  errors.ThrowIfAny("veth-workload DEL");
}

}  // namespace netiface::veth_workload
