#include "netiface/cni/error.h"
#include "netiface/cni/error_list.h"
#include "netiface/cni/log.h"
#include "netiface/veth_workload/naming.h"
#include "netiface/veth_workload/veth_workload.h"

namespace netiface::veth_workload {

void Del(const cni::CmdArgs& args, Ops& ops) {
  Config c = ParseConfig(args.conf);
  cni::ErrorList errors("veth-workload: ");
  auto ours = [&](const EndpointRecord& r) { return r.container_id == args.container_id && r.ifname == args.ifname; };

  // The record: by its name when the identity can be worked out, else (or when that record is not
  // this attachment's) by a scan. A node name that cannot be resolved any more must not block DEL.
  std::optional<EndpointRecord> record;
  errors.Run("read endpoint record", [&] {
    try {
      Identity id = ParseIdentity(args, ResolveNodename(c));
      record = ops.ReadRecord(RecordFolder(id), EndpointName(id));
    } catch (const cni::Error& e) {
      log::Warn("veth-workload DEL: looking the endpoint record up by attachment: {}", e.what());
    }
    if (!record || !ours(*record)) record = ops.FindRecord(args.container_id, args.ifname);
  });
  // Only a record with this container ID is this attachment's (a newer sandbox of the same pod
  // replaces it, and then the host veth of that name is not ours).
  const bool owned = record && ours(*record);

  // IPAM releases while the kernel spends ~20 ms unregistering the deleted veth (the reference ptp
  // releases first, too).
  std::function<void()> wait_ipam;
  errors.Run("IPAM DEL", [&] { wait_ipam = ops.StartIpamDel(); });
  errors.Run("delete interface", [&] {
    bool deleted = !args.netns.empty() && ops.DeleteContainerLink(args.ifname);
    if (!deleted && owned) ops.DeleteHostVeth(record->host_veth);
  });
  if (wait_ipam) errors.Run("IPAM DEL", [&] { wait_ipam(); });
  if (c.ip_masq || c.feature_floating_ips || (owned && record->HasNat())) {
    errors.Run("remove NAT rules", [&] { ops.NatRemove({c.network, args.container_id, args.ifname}); });
  }
  // Kept while anything failed: it is what a retry or GC needs.
  if (owned && errors.empty()) {
    errors.Run("remove endpoint record", [&] { ops.RemoveRecord(record->Folder(), record->name, args.container_id); });
  }
  errors.ThrowIfAny("veth-workload DEL");
}

}  // namespace netiface::veth_workload
