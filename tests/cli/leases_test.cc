#include "netiface/cli/leases.h"

#include <gtest/gtest.h>

namespace netiface::cli {
namespace {

LeaseRow Row(const std::string& v4, const std::string& ip, int64_t ttl) {
  LeaseRow r;
  r.lease.subnet.v4 = *cni::IpNet::Parse(v4);
  r.lease.attrs.public_ip = cni::IpAddr::Parse(ip);
  r.lease.attrs.backend_type = "host-gw";
  r.lease.etcd_lease = 0x694d7a5b1c2e3f40;
  r.ttl_left = ttl;
  return r;
}

TEST(Leases, Ttl) {
  EXPECT_EQ(FormatTtl(86399), "23h59m59s");
  EXPECT_EQ(FormatTtl(240), "4m0s");
  EXPECT_EQ(FormatTtl(12), "12s");
  EXPECT_EQ(FormatTtl(-1), "expired");
  EXPECT_EQ(FormatTtl(kNeverExpires), "never");
}

TEST(Leases, Table) {
  EXPECT_EQ(FormatLeaseTable({Row("10.5.1.0/24", "192.0.2.1", 86399), Row("10.5.22.0/24", "192.0.2.22", -1)}),
            "SUBNET        PUBLIC-IP   BACKEND  TIME-LEFT\n"
            "10.5.1.0/24   192.0.2.1   host-gw  23h59m59s\n"
            "10.5.22.0/24  192.0.2.22  host-gw  expired\n");
}

TEST(Leases, Json) {
  auto j = LeasesToJson({Row("10.5.1.0/24", "192.0.2.1", 30)});
  EXPECT_EQ(j.dump(), R"([{"backendData":null,"backendType":"host-gw","etcdLease":"694d7a5b1c2e3f40",)"
                      R"("ipv6Subnet":null,"publicIP":"192.0.2.1","publicIPv6":null,"subnet":"10.5.1.0/24",)"
                      R"("ttlSeconds":30}])");
}

}  // namespace
}  // namespace netiface::cli
