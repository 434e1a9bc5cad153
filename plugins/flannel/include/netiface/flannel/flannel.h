// The flannel meta plugin's verbs. The delegate (bridge by default) runs as a child process through
// `exec`, so that tests can replace it.
#pragma once

#include "netiface/cni/exec.h"
#include "netiface/cni/result.h"
#include "netiface/cni/skel.h"

namespace netiface::flannel {

// ADD: renders the delegate config from the config and subnet.env, saves it to
// <dataDir>/<containerID>-<ifname> (0600, fsynced, folder 0700) BEFORE the delegated ADD, and returns the
// delegate's result. When the delegated ADD fails: delegated DEL, the saved config removed, the ADD's
// error rethrown.
cni::Result Add(const cni::CmdArgs& args, cni::Exec& exec = cni::DefaultExec());
// DEL: delegated DEL with the saved config (or the reference plugin's <dataDir>/<containerID>); the file
// is removed only after the delegated DEL succeeded. Without a usable saved config the delegate config is
// rendered from the current config and subnet.env; when that is impossible too, DEL succeeds with a
// warning in the log.
void Del(const cni::CmdArgs& args, cni::Exec& exec = cni::DefaultExec());
// CHECK: delegated CHECK with the saved config and our prevResult. No saved config: cni::Error(kIoFailure).
void Check(const cni::CmdArgs& args, cni::Exec& exec = cni::DefaultExec());
// STATUS: cni::Error(kNotAvailable) when subnet.env is missing or invalid, else delegated STATUS.
void Status(const cni::CmdArgs& args, cni::Exec& exec = cni::DefaultExec());
// GC: delegated GC with the config rendered from the current subnet.env; when it succeeded and a valid
// list was given, saved configs of this network whose attachment is not valid are removed.
void Gc(const cni::CmdArgs& args, cni::Exec& exec = cni::DefaultExec());

cni::PluginFuncs Funcs();

}  // namespace netiface::flannel
