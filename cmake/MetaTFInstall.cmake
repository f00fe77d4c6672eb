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
