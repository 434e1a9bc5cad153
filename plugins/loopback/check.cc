// CHECK: observe lo once, then compare (CompareLoopback, pure).
#include "netiface/cni/error.h"
#include "netiface/cni/join.h"
#include "netiface/loopback/loopback.h"

namespace netiface::loopback {

void Check(const cni::CmdArgs& args, Ops& ops) {
  const auto problems = CompareLoopback(ops.Observe(), args.conf.prev_result, args.netns);
  if (!problems.empty()) throw cni::Error(cni::kInternal, cni::JoinMessages(problems));
}

}  // namespace netiface::loopback
