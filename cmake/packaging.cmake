# `cmake --install`: the `wtmap` command, the public headers of core and fmindex, their libraries
# and a CMake package, so that another project's find_package(wtmap) gives wtmap::core and
# wtmap::fmindex -- the names of the ALIAS targets in this build, so in-tree and installed use
# read alike (examples/consumer/ is such a project; tests/packaging builds it against an install).
#
# Components: Development (headers, libraries, package files) and Runtime (the command).
# `cmake --install build --component Development` needs only the libraries built.
#
# The libraries are static by default, and a static archive carries its private dependencies
# into its users' link line: fmindex's are wtmap::io (the index file's temporary-and-rename) and
# the system's htslib, libdivsufsort64 and zlib. So wtmap::io and the two pkg-config wrappers of
# third_party/ are exported too (wtmap::io's headers are not installed: no public header includes
# them), and wtmapConfig.cmake finds what the exported link interfaces name.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(WTMAP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/wtmap CACHE STRING
    "Where the CMake package files (wtmapConfig.cmake and the rest) are installed, under the prefix")

set_target_properties(wtmap_core PROPERTIES EXPORT_NAME core)
set_target_properties(wtmap_fmindex PROPERTIES EXPORT_NAME fmindex)
set_target_properties(wtmap_io PROPERTIES EXPORT_NAME io)
set_target_properties(wtmap_htslib PROPERTIES EXPORT_NAME htslib)
set_target_properties(wtmap_divsufsort PROPERTIES EXPORT_NAME divsufsort)

install(TARGETS wtmap_core wtmap_fmindex wtmap_io wtmap_htslib wtmap_divsufsort EXPORT wtmapTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ ${PROJECT_SOURCE_DIR}/fmindex/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development)
install(EXPORT wtmapTargets NAMESPACE wtmap:: DESTINATION ${WTMAP_INSTALL_CMAKEDIR} COMPONENT Development)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/wtmapConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/wtmapConfig.cmake INSTALL_DESTINATION ${WTMAP_INSTALL_CMAKEDIR})
# Before 1.0 a minor version may change the API (semantic versioning's 0.y.z): 0.1 finds 0.1.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/wtmapConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/wtmapConfig.cmake ${PROJECT_BINARY_DIR}/package/wtmapConfigVersion.cmake
  DESTINATION ${WTMAP_INSTALL_CMAKEDIR} COMPONENT Development)

install(TARGETS wtmap RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime)
