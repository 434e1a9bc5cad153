// Internal to netiface_cli_lib: one parsed command line and its execution.
#pragma once

#include <string>
#include <vector>

#include "netiface/cli/cap_flags.h"
#include "netiface/cli/cli.h"

namespace netiface::cli {

// A command line after parsing, with flags > environment > defaults already applied.
struct Invocation {
  std::string command;  // add, check, del, gc, status, ls, ipam-ls, leases
  std::string network;
  std::string netns;  // as given ("" when not given)
  std::string conf_dir;
  std::string cni_path;
  std::string cache_dir;
  std::string ifname;
  std::string container_id;        // "" = derived from netns
  std::string args;                // CNI_ARGS text
  std::string cap_args;            // CAP_ARGS JSON text
  CapFlags cap_flags;              // --publish, --ingress-rate, --mac, --ip ...: merged into cap_args
  std::vector<std::string> valid;  // gc: CID[/IFNAME]
  std::string valid_file;          // gc: a file of CID[/IFNAME] lines
  bool live = false;               // gc: an attachment whose netns exists is valid
  bool all_stale = false;          // gc: no valid attachments needed; netns-unknown ones are stale too
  bool dry_run = false;            // gc: print the plan, call nothing
  std::string data_dir;            // ipam ls
  bool json = false;               // ls, ipam ls, leases
  // leases: where flannel's leases are (flanneld's flags and defaults)
  std::string etcd_endpoints;
  std::string etcd_prefix;
  std::string etcd_cafile, etcd_certfile, etcd_keyfile;
};

// Runs the command; prints results on ctx.out and errors on ctx.err. Returns an ExitCode.
int Execute(const Invocation& inv, CliContext& ctx);

}  // namespace netiface::cli
