# The man pages, generated from sources kept next to the code (go-md2man renders them): netiface(1) from
# tools/netiface/netiface.1.md, netiface-agent(8) from agent/netiface-agent.8.md, netiface-cni(8) from
# plugins/netiface-cni.8.md and netiface-<plugin>(8) from each plugin's README (cmake/man_page.cmake), so
# that a plugin's page is its README's key table. tests/docs/man_pages_test.sh checks them against the
# real --help and the READMEs. Built into build/man/ (gzipped, as Debian installs them) when go-md2man is
# there, else skipped with a note: a user's build never needs it.
find_program(GO_MD2MAN go-md2man)
find_program(GZIP_PROGRAM gzip)
if(NOT GO_MD2MAN OR NOT GZIP_PROGRAM)
  message(STATUS "go-md2man or gzip not found: no man pages (apt-get install go-md2man)")
  return()
endif()
set(man_sources "")
function(netiface_man_page page section)
  cmake_parse_arguments(ARG "" "SOURCE;PLUGIN" "" ${ARGN})
  set(md ${CMAKE_BINARY_DIR}/man/${page}.${section}.md)
  set(out ${CMAKE_BINARY_DIR}/man/${page}.${section})
  set(extra "")
  if(ARG_PLUGIN)
    set(extra -DPLUGIN=${ARG_PLUGIN})
  endif()
  add_custom_command(OUTPUT ${out}.gz ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${ARG_SOURCE} -DOUT=${md} -DVERSION=${PROJECT_VERSION} ${extra}
            -P ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
    COMMAND ${GO_MD2MAN} -in ${md} -out ${out}
    COMMAND ${GZIP_PROGRAM} -9nf -k ${out}
    DEPENDS ${ARG_SOURCE} ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake VERBATIM)
  set_property(GLOBAL APPEND PROPERTY NETIFACE_MAN_OUTPUTS ${out}.gz)
  install(FILES ${out}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endfunction()

netiface_man_page(netiface 1 SOURCE ${PROJECT_SOURCE_DIR}/tools/netiface/netiface.1.md)
netiface_man_page(netiface-agent 8 SOURCE ${PROJECT_SOURCE_DIR}/agent/netiface-agent.8.md)
netiface_man_page(netiface-cni 8 SOURCE ${PROJECT_SOURCE_DIR}/plugins/netiface-cni.8.md)
foreach(plugin ${NETIFACE_PLUGINS})
  netiface_man_page(netiface-${plugin} 8 SOURCE ${PROJECT_SOURCE_DIR}/plugins/${plugin}/README.md PLUGIN ${plugin})
endforeach()
get_property(outputs GLOBAL PROPERTY NETIFACE_MAN_OUTPUTS)
add_custom_target(man ALL DEPENDS ${outputs})
