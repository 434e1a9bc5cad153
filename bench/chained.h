// The chained plugins (portmap, bandwidth, tuning, firewall) and loopback, ours against the reference on
// the same prepared attachments: each container is a namespace whose eth0 has its veth peer in the bench's
// host namespace and an address, and the plugin gets the prevResult a main plugin would have printed.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "scenario.h"

namespace netiface::bench {

struct ChainedSetup {
  std::string label;
  std::string plugin;  // path of the executable
  // The config for container i (cniVersion, name, type, the plugin's keys); prevResult is added.
  std::function<nlohmann::json(int i)> conf;
};

// `existing` attachments ADDed first (not timed), then N ADDs, CHECK of the first n_check, N DELs (timed),
// then the existing ones DELed. Containers are prepared before and removed after, outside the timings.
SeqReport RunChained(const ChainedSetup& s, int n, int n_check, int existing = 0);

// Section 7 of the report, in Markdown: every plugin's pair, and portmap with `existing` mappings on the
// node. `bin`, `ref`: the folders of ours and the reference's; `work`: a scratch folder.
std::string ChainedSection(const std::string& bin, const std::string& ref, const std::string& work, int n, int n_check,
                           int existing);

}  // namespace netiface::bench
