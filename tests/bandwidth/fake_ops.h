// An in-memory Ops for the bandwidth verbs: keeps the qdiscs, filters and ifbs the real effects would
// leave, records every call and can fail any one of them (testing::FaultSteps).
#pragma once

#include <linux/if_ether.h>
#include <linux/pkt_sched.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fault_steps.h"
#include "netiface/bandwidth/ops.h"

namespace netiface::bandwidth::test {

class FakeOps : public Ops {
 public:
  testing::FaultSteps faults;

  struct LinkState {
    nl::LinkInfo info;
    std::optional<nl::TbfParams> root_tbf;
    bool ingress = false;
    std::vector<int> redirects;  // ifindexes
  };
  std::map<int, LinkState> links;  // by ifindex
  bool peer_present = true;
  int next_index = 10;

  FakeOps() { links[4] = {.info = {.index = 4, .name = "veth1234abcd", .kind = "veth", .mtu = 1450}}; }

  std::optional<nl::LinkInfo> HostPeer(const std::string&) override {
    faults.Step("HostPeer");
    if (!peer_present || !links.count(4)) return std::nullopt;
    return links[4].info;
  }
  double TicksPerUsec() override {
    faults.Step("TicksPerUsec");
    return 15.625;
  }
  void AddRootTbf(int ifindex, const nl::TbfParams& p) override {
    LinkState& l = At(ifindex);
    if (l.root_tbf) throw cni::Error(cni::kNetlink, "exists");
    faults.Step("AddRootTbf " + l.info.name, [&] { l.root_tbf = p; });
  }
  bool DeleteRootQdisc(int ifindex) override {
    bool had = false;
    faults.Step("DeleteRootQdisc", [&] {
      if (!links.count(ifindex)) return;
      had = links[ifindex].root_tbf.has_value();
      links[ifindex].root_tbf.reset();
    });
    return had;
  }
  void AddIngressQdisc(int ifindex) override {
    LinkState& l = At(ifindex);
    if (l.ingress) throw cni::Error(cni::kNetlink, "exists");
    faults.Step("AddIngressQdisc", [&] { l.ingress = true; });
  }
  bool DeleteIngressQdisc(int ifindex) override {
    bool had = false;
    faults.Step("DeleteIngressQdisc", [&] {
      if (!links.count(ifindex)) return;
      had = links[ifindex].ingress;
      links[ifindex].ingress = false;
      links[ifindex].redirects.clear();
    });
    return had;
  }
  void AddRedirect(int ifindex, int target) override {
    LinkState& l = At(ifindex);
    if (!l.ingress) throw cni::Error(cni::kNetlink, "no ingress qdisc");
    faults.Step("AddRedirect", [&] { l.redirects.push_back(target); });
  }
  nl::LinkInfo CreateIfb(const std::string& name, int mtu) override {
    if (Find(name)) throw cni::Error(cni::kNetlink, "exists");
    nl::LinkInfo info{.index = next_index, .name = name, .kind = "ifb", .mac = "06:00:00:00:00:01", .mtu = mtu};
    faults.Step("CreateIfb", [&] { links[next_index++] = {.info = info}; });
    return info;
  }
  bool DeleteLink(const std::string& name) override {
    bool had = false;
    faults.Step("DeleteLink", [&] {
      if (const LinkState* l = Find(name)) {
        int index = l->info.index;
        links.erase(index);
        for (auto& [i, other] : links) std::erase(other.redirects, index);
        had = true;
      }
    });
    return had;
  }
  Observed Observe(int host_ifindex, const std::string& ifb) override {
    faults.Step("Observe");
    Observed o;
    if (links.count(host_ifindex)) {
      const LinkState& h = links[host_ifindex];
      o.host_qdiscs = Qdiscs(h);
      if (!h.redirects.empty()) {
        o.host_filters.push_back({.kind = "u32",
                                  .priority = 1,
                                  .protocol = ETH_P_ALL,
                                  .classid = 0x10001,
                                  .egress_redirect_to = h.redirects});
      }
    }
    if (const LinkState* l = Find(ifb)) {
      o.ifb = l->info;
      o.ifb_qdiscs = Qdiscs(*l);
    }
    return o;
  }

  const LinkState* Find(const std::string& name) const {
    for (const auto& [i, l] : links) {
      if (l.info.name == name) return &l;
    }
    return nullptr;
  }

 private:
  LinkState& At(int ifindex) {
    if (!links.count(ifindex)) throw cni::Error(cni::kNetlink, "no such link");
    return links[ifindex];
  }
  static std::vector<nl::QdiscInfo> Qdiscs(const LinkState& l) {
    std::vector<nl::QdiscInfo> q;
    if (l.root_tbf) q.push_back({.kind = "tbf", .handle = 0x10000, .parent = TC_H_ROOT, .tbf = l.root_tbf});
    if (!l.root_tbf) q.push_back({.kind = "noqueue", .parent = TC_H_ROOT});
    if (l.ingress) q.push_back({.kind = "ingress", .handle = 0xffff0000, .parent = TC_H_INGRESS});
    return q;
  }
};

}  // namespace netiface::bandwidth::test
