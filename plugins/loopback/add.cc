// ADD as numbered steps over Ops, its one change undone on a failure (cni::UndoStack).
#include "netiface/cni/log.h"
#include "netiface/cni/undo.h"
#include "netiface/loopback/loopback.h"

namespace netiface::loopback {

cni::Result Add(const cni::CmdArgs& args, Ops& ops) {
  // 1. Before any change: the namespace and its lo exist, and whether lo is up already.
  const Observed before = ops.Observe();

  cni::UndoStack undo;
  // 2. lo up; set down again on a failure only when this ADD brought it up.
  if (!before.up) {
    undo.Push("set lo down", [&ops] { ops.SetDown(); });
    ops.SetUp();
  }

  // 3. The result: prevResult passed through, else lo as the kernel reports it now.
  cni::Result result = args.conf.prev_result ? *args.conf.prev_result : MakeResult(ops.Observe(), args.netns);

  // 4. skel prints the result once this returns, past every undo: whatever could stop that fails here.
  cni::ResultToJson(result, args.conf.cni_version);
  undo.Dismiss();
  log::Debug("ADD done");
  return result;
}

}  // namespace netiface::loopback
