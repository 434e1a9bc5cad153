// What both fault matrices compare of nftables: the ruleset of a namespace without what the kernel
// renumbers when a table or chain is made again (handles) and without the metainfo header.
#pragma once

#include <nlohmann/json.hpp>

#include "testutil.h"

namespace netiface::testing {

inline nlohmann::json RulesetWithoutHandles(const TempNetns& ns) {
  nlohmann::json out = nlohmann::json::array();
  for (nlohmann::json e : ns.Sh("nft -j list ruleset").Json().value("nftables", nlohmann::json::array())) {
    if (e.contains("metainfo")) continue;
    for (auto& [kind, body] : e.items()) {
      if (body.is_object()) body.erase("handle");
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace netiface::testing
