// A main plugin's IPAM, delegated: the plugin of ipam.type run as a child with this request's
// environment and this plugin's own stdin, as the reference's main plugins do. Holds the ADD or DEL
// running in the background, so that a verb overlaps it with its kernel work and a rollback needs
// nothing but this object to finish it. One per verb call (a plugin's KernelOps owns one).
#pragma once

#include <optional>
#include <string>

#include "netiface/cni/exec.h"
#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"

namespace netiface::cni {

class IpamDelegate {
 public:
  // `args` must outlive this object; the type is args.conf.IpamType().
  explicit IpamDelegate(const CmdArgs& args);

  // Starts IPAM ADD; WaitAdd() returns its result or throws its error (kInternal when none was started).
  void StartAdd();
  Result WaitAdd();
  // A started ADD whose result is in (IPAM ran in this process): WaitAdd() returns at once.
  bool AddFinished() const { return add_ && add_->Finished(); }
  // Waits for a started ADD first, ignoring its outcome, then runs DEL: a release racing its allocation
  // could free the address before it is taken and leak it.
  void Del();
  // DEL in the background; WaitDel() throws its error (nothing when none was started).
  void StartDel();
  void WaitDel();
  void Check();
  void Status();
  void Gc();

  const std::string& type() const { return type_; }

 private:
  const CmdArgs& args_;
  std::string type_;
  DelegateConf conf_;              // this plugin's stdin, which IPAM gets as it is
  std::optional<PendingAdd> add_;  // reaped by its destructor, also when the verb threw
  std::optional<PendingDelegate> del_;
};

}  // namespace netiface::cni
