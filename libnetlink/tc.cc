// Traffic control over libnl-route: qdiscs (tbf, ingress), the u32 + mirred redirect, ifb devices.
#include "netiface/netlink/tc.h"

#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>

#include <cstring>
#include <memory>

#include <netlink/route/act/mirred.h>
#include <netlink/route/action.h>
#include <netlink/route/classifier.h>
#include <netlink/route/cls/u32.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/tbf.h>
#include <netlink/route/tc.h>

#include "netiface/cni/error.h"
#include "nl_util.h"

namespace netiface::nl {
namespace {

struct QdiscDeleter {
  void operator()(rtnl_qdisc* p) const noexcept { rtnl_qdisc_put(p); }
};
struct ClsDeleter {
  void operator()(rtnl_cls* p) const noexcept { rtnl_cls_put(p); }
};
struct ActDeleter {
  void operator()(rtnl_act* p) const noexcept { rtnl_act_put(p); }
};
struct CacheDeleter {
  void operator()(nl_cache* p) const noexcept { nl_cache_free(p); }
};
using QdiscPtr = std::unique_ptr<rtnl_qdisc, QdiscDeleter>;
using ClsPtr = std::unique_ptr<rtnl_cls, ClsDeleter>;
using ActPtr = std::unique_ptr<rtnl_act, ActDeleter>;
using CachePtr = std::unique_ptr<nl_cache, CacheDeleter>;

std::string On(int ifindex) { return " on link #" + std::to_string(ifindex); }

QdiscPtr NewQdisc(int ifindex, uint32_t parent, uint32_t handle, const char* kind, const std::string& what) {
  QdiscPtr q(detail::NotNull(rtnl_qdisc_alloc(), "qdisc"));
  rtnl_tc_set_ifindex(TC_CAST(q.get()), ifindex);
  rtnl_tc_set_parent(TC_CAST(q.get()), parent);
  if (handle != 0) rtnl_tc_set_handle(TC_CAST(q.get()), handle);
  if (kind != nullptr) Check(rtnl_tc_set_kind(TC_CAST(q.get()), kind), what);
  return q;
}

// The tbf parameters of a qdisc reply's TCA_OPTIONS, exactly as the kernel reports them.
std::optional<TbfParams> ParseTbf(nlattr* options) {
  if (options == nullptr) return std::nullopt;
  nlattr* tb[TCA_TBF_MAX + 1] = {};
  if (nla_parse_nested(tb, TCA_TBF_MAX, options, nullptr) < 0 || tb[TCA_TBF_PARMS] == nullptr) return std::nullopt;
  if (nla_len(tb[TCA_TBF_PARMS]) < static_cast<int>(sizeof(tc_tbf_qopt))) return std::nullopt;
  tc_tbf_qopt opt{};
  std::memcpy(&opt, nla_data(tb[TCA_TBF_PARMS]), sizeof opt);
  TbfParams p{.rate_bytes = opt.rate.rate, .buffer_ticks = opt.buffer, .limit_bytes = opt.limit};
  if (tb[TCA_TBF_RATE64] != nullptr) p.rate_bytes = nla_get_u64(tb[TCA_TBF_RATE64]);
  return p;
}

bool DeleteQdisc(Socket& s, int ifindex, uint32_t parent, const std::string& what) {
  QdiscPtr q = NewQdisc(ifindex, parent, 0, nullptr, what);
  int rc = rtnl_qdisc_delete(s.get(), q.get());
  if (IsNotFound(rc)) return false;
  // No qdisc of that parent but the default one: the kernel says EINVAL for some kinds.
  if (rc == -NLE_INVAL) return false;
  Check(rc, what);
  return true;
}

}  // namespace

void AddRootTbf(Socket& s, int ifindex, const TbfParams& p) {
  const std::string what = "failed to add tbf qdisc" + On(ifindex);
  if (p.rate_bytes == 0 || p.rate_bytes > static_cast<uint64_t>(INT32_MAX)) {
    throw cni::Error(cni::kInvalidConfig, what + ": rate out of range", std::to_string(p.rate_bytes));
  }
  QdiscPtr q = NewQdisc(ifindex, TC_H_ROOT, kTcRootHandle, "tbf", what);
  rtnl_qdisc_tbf_set_limit(q.get(), static_cast<int>(p.limit_bytes));
  // The bucket in bytes only seeds libnl's own buffer computation, replaced below.
  rtnl_qdisc_tbf_set_rate(q.get(), static_cast<int>(p.rate_bytes), 1, 0);
  nl_msg* raw = nullptr;
  Check(rtnl_qdisc_build_add_request(q.get(), NLM_F_CREATE | NLM_F_EXCL, &raw), what);
  detail::MsgPtr msg(raw);
  // The buffer as the caller computed it, in the request's TCA_OPTIONS/TCA_TBF_PARMS.
  nlattr* options = nlmsg_find_attr(nlmsg_hdr(msg.get()), sizeof(tcmsg), TCA_OPTIONS);
  nlattr* parms =
      options == nullptr ? nullptr : nla_find(static_cast<nlattr*>(nla_data(options)), nla_len(options), TCA_TBF_PARMS);
  if (parms == nullptr || nla_len(parms) < static_cast<int>(sizeof(tc_tbf_qopt))) {
    throw cni::Error(cni::kNetlink, what + ": libnl built no TCA_TBF_PARMS");
  }
  tc_tbf_qopt opt{};
  std::memcpy(&opt, nla_data(parms), sizeof opt);
  opt.buffer = p.buffer_ticks;
  opt.limit = p.limit_bytes;
  std::memcpy(nla_data(parms), &opt, sizeof opt);
  Check(detail::Transact(s, std::move(msg), [](nl_msg*) {}), what);
}

void AddIngressQdisc(Socket& s, int ifindex) {
  const std::string what = "failed to add ingress qdisc" + On(ifindex);
  QdiscPtr q = NewQdisc(ifindex, TC_H_INGRESS, kTcIngressHandle, "ingress", what);
  Check(rtnl_qdisc_add(s.get(), q.get(), NLM_F_CREATE | NLM_F_EXCL), what);
}

void AddRedirectFilter(Socket& s, int ifindex, int target_ifindex) {
  const std::string what = "failed to add redirect filter" + On(ifindex);
  ClsPtr cls(detail::NotNull(rtnl_cls_alloc(), "classifier"));
  rtnl_tc_set_ifindex(TC_CAST(cls.get()), ifindex);
  rtnl_tc_set_parent(TC_CAST(cls.get()), kTcIngressHandle);
  Check(rtnl_tc_set_kind(TC_CAST(cls.get()), "u32"), what);
  rtnl_cls_set_prio(cls.get(), 1);
  rtnl_cls_set_protocol(cls.get(), ETH_P_ALL);
  Check(rtnl_u32_set_classid(cls.get(), TcHandle(1, 1)), what);
  Check(rtnl_u32_add_key_uint32(cls.get(), 0, 0, 0, 0), what);  // matches every packet
  Check(rtnl_u32_set_cls_terminal(cls.get()), what);
  ActPtr act(detail::NotNull(rtnl_act_alloc(), "action"));
  Check(rtnl_tc_set_kind(TC_CAST(act.get()), "mirred"), what);
  Check(rtnl_mirred_set_action(act.get(), TCA_EGRESS_REDIR), what);
  Check(rtnl_mirred_set_policy(act.get(), TC_ACT_STOLEN), what);
  Check(rtnl_mirred_set_ifindex(act.get(), static_cast<uint32_t>(target_ifindex)), what);
  Check(rtnl_u32_add_action(cls.get(), act.get()), what);  // the classifier takes its own reference
  Check(rtnl_cls_add(s.get(), cls.get(), NLM_F_CREATE | NLM_F_EXCL), what);
}

bool DeleteRootQdisc(Socket& s, int ifindex) {
  return DeleteQdisc(s, ifindex, TC_H_ROOT, "failed to delete root qdisc" + On(ifindex));
}

bool DeleteIngressQdisc(Socket& s, int ifindex) {
  return DeleteQdisc(s, ifindex, TC_H_INGRESS, "failed to delete ingress qdisc" + On(ifindex));
}

std::vector<QdiscInfo> ListQdiscs(Socket& s, int ifindex) {
  detail::MsgPtr msg(detail::NotNull(nlmsg_alloc_simple(RTM_GETQDISC, NLM_F_DUMP), "message"));
  tcmsg t{};
  t.tcm_family = AF_UNSPEC;
  t.tcm_ifindex = ifindex;
  Check(nlmsg_append(msg.get(), &t, sizeof t, NLMSG_ALIGNTO), "failed to build qdisc dump");
  std::vector<QdiscInfo> out;
  int rc = detail::Transact(s, std::move(msg), [&](nl_msg* m) {
    nlmsghdr* h = nlmsg_hdr(m);
    if (h->nlmsg_type != RTM_NEWQDISC || !nlmsg_valid_hdr(h, sizeof(tcmsg))) return;
    const auto* reply = static_cast<const tcmsg*>(nlmsg_data(h));
    if (reply->tcm_ifindex != ifindex) return;  // the kernel dumps every device's qdiscs
    nlattr* tb[TCA_MAX + 1] = {};
    if (nlmsg_parse(h, sizeof(tcmsg), tb, TCA_MAX, nullptr) < 0) return;
    QdiscInfo q;
    if (tb[TCA_KIND] != nullptr) q.kind = nla_get_string(tb[TCA_KIND]);
    q.handle = reply->tcm_handle;
    q.parent = reply->tcm_parent;
    if (q.kind == "tbf") q.tbf = ParseTbf(tb[TCA_OPTIONS]);
    out.push_back(std::move(q));
  });
  if (IsNotFound(rc)) return {};
  Check(rc, "failed to list qdiscs" + On(ifindex));
  return out;
}

std::vector<RedirectFilterInfo> ListIngressFilters(Socket& s, int ifindex) {
  nl_cache* raw = nullptr;
  int rc = rtnl_cls_alloc_cache(s.get(), ifindex, kTcIngressHandle, &raw);
  if (IsNotFound(rc) || rc == -NLE_INVAL) return {};
  Check(rc, "failed to list filters" + On(ifindex));
  CachePtr cache(raw);
  std::vector<RedirectFilterInfo> out;
  for (nl_object* o = nl_cache_get_first(cache.get()); o != nullptr; o = nl_cache_get_next(o)) {
    auto* cls = reinterpret_cast<rtnl_cls*>(o);
    RedirectFilterInfo f;
    const char* kind = rtnl_tc_get_kind(TC_CAST(cls));
    f.kind = kind ? kind : "";
    f.priority = rtnl_cls_get_prio(cls);
    f.protocol = rtnl_cls_get_protocol(cls);
    if (f.kind == "u32") {
      // A u32 filter is dumped twice: its hash table (no actions) and its node.
      uint32_t classid = 0;
      if (rtnl_u32_get_classid(cls, &classid) < 0) continue;
      f.classid = classid;
      for (rtnl_act* a = rtnl_u32_get_action(cls); a != nullptr; a = rtnl_act_next(a)) {
        const char* akind = rtnl_tc_get_kind(TC_CAST(a));
        if (akind != nullptr && std::strcmp(akind, "mirred") == 0 && rtnl_mirred_get_action(a) == TCA_EGRESS_REDIR) {
          f.egress_redirect_to.push_back(static_cast<int>(rtnl_mirred_get_ifindex(a)));
        }
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

void CreateIfb(Socket& s, const std::string& name, int mtu) {
  const std::string what = "failed to create ifb device " + name;
  if (name.empty() || name.size() >= IFNAMSIZ) throw cni::Error(cni::kInvalidConfig, what + ": invalid name");
  detail::LinkPtr l = detail::NewLink();
  rtnl_link_set_name(l.get(), name.c_str());
  Check(rtnl_link_set_type(l.get(), "ifb"), what);
  if (mtu > 0) rtnl_link_set_mtu(l.get(), static_cast<unsigned int>(mtu));
  rtnl_link_set_flags(l.get(), IFF_UP);
  Check(rtnl_link_add(s.get(), l.get(), NLM_F_CREATE | NLM_F_EXCL), what);
}

}  // namespace netiface::nl
