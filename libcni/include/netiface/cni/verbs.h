// The verb table, built one way by every plugin. A plugin writes its verbs as functions of the request
// and of its Ops (the interface over everything the plugin changes or reads outside its own memory:
// netlink, the IPAM delegate, nftables, its files). BindVerbs turns them into skel's PluginFuncs,
// creating one Ops per call from the request. Tests call the same verbs with an in-memory Ops.
//
//   cni::PluginFuncs Funcs() {
//     return cni::BindVerbs<Ops>([](const cni::CmdArgs& a) { return std::make_unique<KernelOps>(a); },
//                                {.add = Add, .del = Del, .check = Check, .status = Status, .gc = Gc});
//   }
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "netiface/cni/skel.h"

namespace netiface::cni {

template <typename Ops>
struct Verbs {
  std::function<Result(const CmdArgs&, Ops&)> add;
  std::function<void(const CmdArgs&, Ops&)> del;
  std::function<void(const CmdArgs&, Ops&)> check;   // empty: CHECK is an error (skel)
  std::function<void(const CmdArgs&, Ops&)> status;  // empty: STATUS succeeds
  std::function<void(const CmdArgs&, Ops&)> gc;      // empty: GC succeeds
};

namespace detail {

// `get(args)` yields something that dereferences to an Ops& and keeps it alive while the verb runs.
template <typename Ops, typename Get>
PluginFuncs Bind(Get get, Verbs<Ops> verbs) {
  auto bind = [get](auto verb)
      -> std::function<decltype(verb(std::declval<const CmdArgs&>(), std::declval<Ops&>()))(const CmdArgs&)> {
    if (!verb) return nullptr;
    return [get, verb](const CmdArgs& args) {
      auto ops = get(args);
      return verb(args, *ops);
    };
  };
  return {.add = bind(verbs.add),
          .del = bind(verbs.del),
          .check = bind(verbs.check),
          .status = bind(verbs.status),
          .gc = bind(verbs.gc)};
}

}  // namespace detail

// REQUIRES: make_ops returns a non-null Ops for any request skel has validated. The Ops lives exactly as
// long as the verb's call, so that an undo (undo.h) may refer to it.
template <typename Ops>
PluginFuncs BindVerbs(std::function<std::unique_ptr<Ops>(const CmdArgs&)> make_ops, Verbs<Ops> verbs) {
  return detail::Bind<Ops>(std::move(make_ops), std::move(verbs));
}

// For a plugin whose only seam is process-wide (flannel's is the delegate's Exec): every call gets
// `ops`, which must outlive every call (a function-local static does).
template <typename Ops>
PluginFuncs BindVerbs(Ops& ops, Verbs<Ops> verbs) {
  return detail::Bind<Ops>([&ops](const CmdArgs&) { return &ops; }, std::move(verbs));
}

}  // namespace netiface::cni
