// MAC addresses as the CNI conventions pass them (runtimeConfig.mac, args.cni.mac, CNI_ARGS MAC=).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace netiface::cni {

// The 6-byte forms Go's net.ParseMAC accepts (aa:bb:cc:dd:ee:ff, aa-bb-cc-dd-ee-ff, aabb.ccdd.eeff,
// any case), as lower-case "aa:bb:cc:dd:ee:ff"; nullopt for anything else.
std::optional<std::string> NormalizeMac(std::string_view s);

}  // namespace netiface::cni
