# Installs the MetaTF package: the exported targets (MetaTF::runtime,
# MetaTF::mtfc, MetaTF::mtf), metatf_generate(), and the config and version
# files that find_package(MetaTF CONFIG) reads. The targets' install() rules
# live next to them in runtime/, compiler/ and tools/mtf/.
include(CMakePackageConfigHelpers)

set(METATF_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/MetaTF")

install(EXPORT MetaTFTargets
  NAMESPACE MetaTF::
  FILE MetaTFTargets.cmake
  DESTINATION ${METATF_INSTALL_CMAKEDIR})

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/MetaTFConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/MetaTFConfig.cmake"
  INSTALL_DESTINATION ${METATF_INSTALL_CMAKEDIR})
# Before 1.0 a minor release may change the API, so only the same minor version is compatible.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/MetaTFConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)

install(FILES
  "${PROJECT_BINARY_DIR}/MetaTFConfig.cmake"
  "${PROJECT_BINARY_DIR}/MetaTFConfigVersion.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/MetaTFGenerate.cmake"
  DESTINATION ${METATF_INSTALL_CMAKEDIR})

# The shipped DTDs, which `mtf --dtd NAME` and metatf.Writer find by name
# (metatf::find_dtd): PREFIX/share/metatf/dtds.
file(GLOB metatf_dtds CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/dtds/*.dtd")
install(FILES ${metatf_dtds} DESTINATION ${CMAKE_INSTALL_DATADIR}/metatf/dtds)

# Everything `cmake --install` installs, and nothing else: what scripts/run.sh
# builds. Each install(TARGETS) adds its targets to METATF_INSTALLED_TARGETS.
get_property(metatf_installed GLOBAL PROPERTY METATF_INSTALLED_TARGETS)
add_custom_target(installables DEPENDS ${metatf_installed})
