// Config, the tbf parameters and the ifb name: the reference's rules and formulas, as values.
#include "netiface/bandwidth/plan.h"

#include <array>
#include <cstdio>
#include <limits>
#include <string>

#include "netiface/cni/error.h"
#include "netiface/cni/hash.h"
#include "netiface/cni/json_get.h"

namespace netiface::bandwidth {
namespace {

constexpr std::array<const char*, 4> kKeys = {"ingressRate", "ingressBurst", "egressRate", "egressBurst"};
constexpr double kTimeUnitsPerSec = 1e6;  // psched time units: microseconds
constexpr double kLatencyUsec = 25000;    // the reference's 25 ms queue

uint64_t GetCount(const nlohmann::json& obj, const char* key, const std::string& path) {
  const nlohmann::json* v = cni::FindSet(obj, key);
  if (v == nullptr) return 0;
  if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0)) {
    cni::ThrowInvalidValue("bandwidth", path + key, "must be a non-negative integer", *v);
  }
  return v->get<uint64_t>();
}

void Validate(const Limit& l, const std::string& dir) {
  if (l.burst == 0 && l.rate != 0)
    throw cni::Error(cni::kInvalidConfig, dir + ": if rate is set, burst must also be set");
  if (l.rate == 0 && l.burst != 0)
    throw cni::Error(cni::kInvalidConfig, dir + ": if burst is set, rate must also be set");
  if (l.burst / 8 >= std::numeric_limits<uint32_t>::max()) {
    throw cni::Error(cni::kInvalidConfig, dir + ": burst cannot be more than 4GB");
  }
  if (l.rate >= (uint64_t{1} << 32)) throw cni::Error(cni::kInvalidConfig, dir + ": rate must be below 2^32 bit/s");
  if (l.active() && (l.rate < 8 || l.burst < 8)) {
    throw cni::Error(cni::kInvalidConfig, dir + ": rate and burst must be at least 8 (one byte)");
  }
}

}  // namespace

Config ParseConfig(const cni::NetConf& conf) {
  Config c{.network = conf.name, .cni_version = conf.cni_version};
  const nlohmann::json* src = &conf.raw;
  std::string path;
  bool top = false;
  for (const char* k : kKeys) top = top || cni::FindSet(conf.raw, k) != nullptr;
  for (const char* k : {"unshapedSubnets", "shapedSubnets"}) top = top || cni::FindSet(conf.raw, k) != nullptr;
  if (!top) {
    const nlohmann::json* rt = cni::FindSet(conf.runtime_config, "bandwidth");
    if (rt == nullptr) return c;
    if (!rt->is_object()) cni::ThrowInvalidValue("bandwidth", "runtimeConfig.bandwidth", "must be an object", *rt);
    src = rt;
    path = "runtimeConfig.bandwidth.";
  }
  for (const char* k : {"unshapedSubnets", "shapedSubnets"}) {
    const nlohmann::json* v = cni::FindSet(*src, k);
    if (v != nullptr && !(v->is_array() && v->empty())) {
      cni::ThrowInvalidValue("bandwidth", path + k, "is not supported by this plugin", *v);
    }
  }
  c.ingress = {GetCount(*src, "ingressRate", path), GetCount(*src, "ingressBurst", path)};
  c.egress = {GetCount(*src, "egressRate", path), GetCount(*src, "egressBurst", path)};
  Validate(c.ingress, "ingress");
  Validate(c.egress, "egress");
  return c;
}

double TicksPerUsec(std::string_view psched) {
  unsigned int t2us = 0, us2t = 0, clock_res = 0, hz = 0;
  const std::string text(psched);
  if (std::sscanf(text.c_str(), "%x %x %x %x", &t2us, &us2t, &clock_res, &hz) != 4 || us2t == 0) {
    throw cni::Error(cni::kIoFailure, "cannot read the psched clock", text);
  }
  if (clock_res == 1000000000) t2us = us2t;  // the kernel's ns clock reports the factors the other way
  return static_cast<double>(t2us) / us2t * (static_cast<double>(clock_res) / kTimeUnitsPerSec);
}

nl::TbfParams PlanTbf(const Limit& l, double ticks_per_usec) {
  const uint64_t rate = l.rate / 8;
  const auto burst = static_cast<uint32_t>(l.burst / 8);
  const double burst_usec = static_cast<double>(burst) * kTimeUnitsPerSec / static_cast<double>(rate);
  const double ticks = static_cast<double>(static_cast<uint32_t>(burst_usec)) * ticks_per_usec;
  const double limit =
      static_cast<double>(static_cast<uint32_t>(static_cast<double>(rate) * kLatencyUsec / kTimeUnitsPerSec)) + burst;
  constexpr double kMax = std::numeric_limits<uint32_t>::max();
  if (burst_usec > kMax || ticks > kMax) {
    throw cni::Error(cni::kInvalidConfig, "burst too large for its rate: the bucket takes more than 2^32 ticks");
  }
  if (limit > kMax) throw cni::Error(cni::kInvalidConfig, "burst too large for its rate: the queue exceeds 4GB");
  return {
      .rate_bytes = rate, .buffer_ticks = static_cast<uint32_t>(ticks), .limit_bytes = static_cast<uint32_t>(limit)};
}

std::string IfbName(std::string_view network, std::string_view container_id) {
  std::string in(network);
  in += container_id;
  return "bwp" + cni::HexDigest(cni::Hash::kSha512, in).substr(0, 12);
}

}  // namespace netiface::bandwidth
