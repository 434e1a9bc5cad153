# The .deb, built by CPack from the install rules (scripts/package.sh configures the tree for it: /usr,
# Debian's build flags, debug info split off). Two packages: netiface (everything a node runs) and
# netiface-dbg (the .debug files under /usr/lib/debug). Dependencies: what dpkg-shlibdeps finds in the
# executables (the plugins' image is static and needs nothing; the CLI/agent image loads libcurl and
# libstdc++), plus libnftables1, which the NAT code dlopen's on first use and dpkg-shlibdeps cannot see.
# The plugins go to their own folder (NETIFACE_CNI_BIN_DIR, /usr/lib/netiface/cni for the .deb), never to
# /usr/lib/cni: the package coexists with containernetworking-plugins (docs/operations.md).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME netiface)
set(CPACK_PACKAGE_VENDOR "netiface")
set(CPACK_PACKAGE_CONTACT "netiface developers <netiface-dev@lists.netiface.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "CNI plugins and a flannel-compatible node agent")
# The Description fields' long text, lines of at most 80 characters (CPack puts the summary before it).
set(CPACK_DEBIAN_UNSPECIFIED_DESCRIPTION "A drop-in for the reference CNI plugins (bridge, host-local, portmap,
bandwidth, tuning, firewall, loopback, flannel) with the same configs,
result JSON and on-disk IPAM store; Calico's routed veth dataplane
(veth-workload); the netiface CLI (cnitool's workflow); and netiface-agent,
a flanneld-compatible node daemon (subnet leases in etcd, host-gw, vxlan).")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://netiface.org")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libnftables1")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "etcd-server")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL Unspecified debug)
set(CPACK_DEBIAN_UNSPECIFIED_PACKAGE_NAME netiface)
set(CPACK_DEBIAN_DEBUG_PACKAGE_NAME netiface-dbg)
set(CPACK_DEBIAN_DEBUG_PACKAGE_SECTION debug)
set(CPACK_DEBIAN_DEBUG_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_DEBUG_PACKAGE_DEPENDS "netiface (= ${PROJECT_VERSION}-1)")
set(CPACK_DEBIAN_DEBUG_DESCRIPTION "debug symbols of netiface
The .debug files of the netiface executables, where gdb finds them
(/usr/lib/debug).")
set(CPACK_STRIP_FILES OFF)  # the install rules strip (and split the debug info off) themselves
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})

# What Debian wants in every package's doc folder: a copyright file and a changelog (changelog.Debian.gz:
# the version has a Debian revision).
set(deb_doc ${CMAKE_BINARY_DIR}/deb-doc)
file(MAKE_DIRECTORY ${deb_doc})
configure_file(${PROJECT_SOURCE_DIR}/cmake/deb/copyright ${deb_doc}/copyright COPYONLY)
string(TIMESTAMP deb_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${deb_doc}/changelog.Debian "netiface (${PROJECT_VERSION}-1) unstable; urgency=medium\n\n  * Release ${PROJECT_VERSION}.\n\n -- ${CPACK_PACKAGE_CONTACT}  ${deb_date}\n")
execute_process(COMMAND gzip -9nf ${deb_doc}/changelog.Debian)
install(FILES ${deb_doc}/copyright ${deb_doc}/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${deb_doc}/copyright ${deb_doc}/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/netiface-dbg
        COMPONENT debug EXCLUDE_FROM_ALL)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/deb/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME netiface)
include(CPack)
