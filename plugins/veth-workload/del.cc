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

  // This attachment's record: through its link (one open, whatever CNI_ARGS this DEL got), else under
  // the name the identity gives (a record whose link was never made: an ADD killed between the two). A
  // node name that cannot be resolved any more must not block DEL.
  std::optional<EndpointRecord> record;
  // Where this attachment's record is, or would be: an ADD killed before it wrote the record may have
  // left its draft there.
  std::optional<std::pair<std::string, std::string>> where;
  // Whether the record under that name is still this attachment's: a newer sandbox of the same pod
  // takes over the name, and with it the host veth name, which is then not ours to delete.
  bool holds_name = false;
  errors.Run("read endpoint record", [&] {
    record = ops.FindRecord(args.container_id, args.ifname);
    if (record) {
      where.emplace(record->Folder(), record->name);
      auto named = ops.ReadRecord(record->Folder(), record->name);
      holds_name = named && ours(*named);
      return;
    }
    try {
      Identity id = ParseIdentity(args, ResolveNodename(c));
      where.emplace(RecordFolder(id), EndpointName(id));
      auto named = ops.ReadRecord(RecordFolder(id), EndpointName(id));
      if (named && ours(*named)) record = named;
      holds_name = record.has_value();
    } catch (const cni::Error& e) {
      log::Warn("veth-workload DEL: no endpoint record by attachment, and no identity to look one up by name: {}",
                e.what());
    }
  });

  // IPAM releases while the kernel spends ~20 ms unregistering the deleted veth (the reference ptp
  // releases first, too).
  std::function<void()> wait_ipam;
  errors.Run("IPAM DEL", [&] { wait_ipam = ops.StartIpamDel(); });
  errors.Run("delete interface", [&] {
    bool deleted = !args.netns.empty() && ops.DeleteContainerLink(args.ifname);
    if (!deleted && holds_name) ops.DeleteHostVeth(record->host_veth);
  });
  if (wait_ipam) errors.Run("IPAM DEL", [&] { wait_ipam(); });
  if (c.ip_masq || c.feature_floating_ips || (record && record->HasNat())) {
    errors.Run("remove NAT rules", [&] { ops.NatRemove({c.network, args.container_id, args.ifname}); });
  }
  // Kept while anything failed: it is what a retry or GC needs. The link goes; the record under its
  // name only while it is this attachment's; abandoned drafts under the name go too, also when there is
  // no record at all.
  if (where && errors.empty()) {
    errors.Run("remove endpoint record",
               [&] { ops.RemoveRecord(where->first, where->second, args.container_id, args.ifname); });
  }
  errors.ThrowIfAny("veth-workload DEL");
}

}  // namespace netiface::veth_workload
