# What `cmake --install` (and the .deb, cmake/Package.cmake) puts where, besides the executables (their
# own folders: plugins/, tools/, agent/): the docs, the example conflists, the CLI's bash completion, the
# license. The man pages are installed by cmake/ManPages.cmake.
set(doc_dir ${CMAKE_INSTALL_DOCDIR})
install(FILES README.md DESTINATION ${doc_dir})
if(NOT NETIFACE_DEB)
  install(FILES LICENSE DESTINATION ${doc_dir})  # the .deb says it in its copyright file instead
endif()
install(FILES docs/architecture.md docs/benchmarks.md docs/agent-benchmarks.md docs/reliability.md docs/operations.md
        DESTINATION ${doc_dir})
install(FILES agent/README.md DESTINATION ${doc_dir} RENAME netiface-agent.md)
foreach(plugin ${NETIFACE_PLUGINS})
  install(FILES plugins/${plugin}/README.md DESTINATION ${doc_dir}/plugins RENAME ${plugin}.md)
endforeach()
# The three stock chains the tests run (tests/cli/chains_netns_test.cc loads them): flannel's, Calico's shape,
# podman's shape.
install(DIRECTORY docs/examples/ DESTINATION ${doc_dir}/examples FILES_MATCHING PATTERN "*.conflist" PATTERN "*.md")
install(FILES tools/netiface/netiface.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME netiface)
