// DEL and the verb table. STATUS and GC have nothing to do: they succeed.
#include <memory>

#include "netiface/cni/verbs.h"
#include "netiface/loopback/kernel_ops.h"
#include "netiface/loopback/loopback.h"

namespace netiface::loopback {

void Del(const cni::CmdArgs& args, Ops& ops) {
  if (args.netns.empty()) return;
  ops.SetDown();  // false: the namespace is gone, which DEL tolerates
}

cni::PluginFuncs Funcs() {
  return cni::BindVerbs<Ops>([](const cni::CmdArgs& a) { return std::make_unique<KernelOps>(a); },
                             {.add = Add, .del = Del, .check = Check});
}

}  // namespace netiface::loopback
