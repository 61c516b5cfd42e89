# Installs the public headers, the compiler library and the tools, and a
# package config so that find_package(tilec) gives the tilec::tilec target
# (and tilec::tilec_c, the compiler's C ABI, libtilec_c)
# and find_package(tilec COMPONENTS runtime) the tilec::runtime target
# (libtilec_rt, which launches bundles and needs no LLVM). The install
# component "runtime" holds the runtime alone:
#   cmake --install build --component runtime --prefix /opt/tilec
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)
if(NOT TARGET tilec_lib)
  return()
endif()
install(DIRECTORY include/tilec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tilec_lib EXPORT tilecTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The compiler's C ABI (include/tilec/tilec.h): tilec::tilec_c.
install(TARGETS tilec_c EXPORT tilecTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tilec tilec-opt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${TILEC_PCH_DIR}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tilec/pch
        FILES_MATCHING PATTERN "*.pch")
# The compiler behind the `tilec` launcher (tools/tilec/CMakeLists.txt).
install(TARGETS tilec_cli LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT tilecTargets NAMESPACE tilec:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilec)
install(TARGETS tilec_rt EXPORT tilecRuntimeTargets COMPONENT runtime
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/tilec/runtime.h include/tilec/rt.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tilec COMPONENT runtime)
install(EXPORT tilecRuntimeTargets NAMESPACE tilec:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilec
        COMPONENT runtime)
configure_package_config_file(cmake/tilecConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tilecConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilec)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tilecConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tilecConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/tilecConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilec COMPONENT runtime)
set_target_properties(tilec tilec-opt PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")
