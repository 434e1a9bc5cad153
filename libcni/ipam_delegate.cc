#include "netiface/cni/ipam_delegate.h"

#include "netiface/cni/error.h"

namespace netiface::cni {

IpamDelegate::IpamDelegate(const CmdArgs& args)
    : args_(args), type_(args.conf.IpamType()), conf_(DelegateConf::Own(args)) {}

void IpamDelegate::StartAdd() { add_.emplace(StartDelegateAdd(type_, conf_, args_)); }

Result IpamDelegate::WaitAdd() {
  if (!add_) throw Error(kInternal, "IPAM ADD was not started");
  return add_->Wait();
}

void IpamDelegate::Del() {
  if (add_) add_->Finish();
  Delegate("DEL", type_, conf_, args_);
}

void IpamDelegate::StartDel() { del_.emplace(StartDelegate("DEL", type_, conf_, args_)); }

void IpamDelegate::WaitDel() {
  if (del_) del_->Wait();
}

void IpamDelegate::Check() { Delegate("CHECK", type_, conf_, args_); }
void IpamDelegate::Status() { Delegate("STATUS", type_, conf_, args_); }
void IpamDelegate::Gc() { Delegate("GC", type_, conf_, args_); }

}  // namespace netiface::cni
