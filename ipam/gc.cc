#include "netiface/ipam/gc.h"

#include <set>
#include <string>

#include "netiface/ipam/reservation.h"

namespace netiface::ipam {

std::vector<IndexEntry> PlanGc(const std::vector<IndexEntry>& reservations, const std::vector<cni::Attachment>& valid) {
  std::set<std::string> owners;  // EncodeOwner of every valid attachment
  std::set<std::string, std::less<>> ids;
  for (const auto& a : valid) {
    owners.insert(EncodeOwner(a.container_id, a.ifname));
    ids.insert(std::string(TrimSpace(a.container_id)));
  }
  std::vector<IndexEntry> release;
  for (const auto& r : reservations) {
    bool keep;
    if (r.owner.find(kLineBreak) != std::string::npos) {
      keep = owners.count(r.owner) > 0;
    } else {
      std::string_view id = TrimSpace(std::string_view(r.owner).substr(0, r.owner.find('\n')));
      keep = !id.empty() && ids.count(id) > 0;
    }
    if (!keep) release.push_back(r);
  }
  return release;
}

}  // namespace netiface::ipam
