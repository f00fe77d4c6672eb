# Builds and runs tests/consumer/project against Meta-TF, as CTest runs it:
#
#   cmake -DMODE=subdirectory|installed -DSOURCE_DIR=<Meta-TF source>
#         -DMETATF_BUILD_DIR=<Meta-TF build> -DWORK_DIR=<scratch directory>
#         -DGENERATOR=... -DMAKE_PROGRAM=... -DCXX_COMPILER=... -DBUILD_TYPE=...
#         [-DCXX_FLAGS=...] [-DLINKER_FLAGS=...] [-DPREFIX_PATH=a|b]
#         -P consumer_test.cmake
#
# subdirectory: the project takes Meta-TF with add_subdirectory(SOURCE_DIR).
# installed: METATF_BUILD_DIR is installed into WORK_DIR/prefix and the project
# finds it there with find_package(MetaTF CONFIG).
# PREFIX_PATH is the Meta-TF build's CMAKE_PREFIX_PATH with '|' for ';' (a
# list cannot cross add_test intact); the consumer needs it to find the same
# dependencies.

foreach(var MODE SOURCE_DIR METATF_BUILD_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "consumer_test.cmake needs -D${var}=...")
  endif()
endforeach()
if(NOT MODE MATCHES "^(subdirectory|installed)$")
  message(FATAL_ERROR "MODE must be 'subdirectory' or 'installed', not '${MODE}'")
endif()

# Runs a command; on failure stops with its output, which CTest then shows.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${what} failed (${code}):\n${ARGN}\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# The build tool's job count: CTest may run other tests beside this one, so
# take what the environment allows, else one job a core (Makefiles would
# otherwise run unbounded with a bare --parallel).
if(DEFINED ENV{CMAKE_BUILD_PARALLEL_LEVEL})
  set(jobs "$ENV{CMAKE_BUILD_PARALLEL_LEVEL}")
else()
  cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_LOGICAL_CORES)
endif()
# Through add_subdirectory the project builds its own mtfc and runtime and
# links nothing of this build: with build type None (Debian's: no flags of
# its own, so neither optimized nor with debug information) they compile in
# a fraction of the time, and what is tested, that a project can take
# Meta-TF this way, is the same.
if(MODE STREQUAL "subdirectory")
  set(BUILD_TYPE None)
endif()
set(config_args)
if(BUILD_TYPE)
  set(config_args --config "${BUILD_TYPE}")
endif()

string(REPLACE "|" ";" prefix_path "${PREFIX_PATH}")
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(configure_args
  -S "${CMAKE_CURRENT_LIST_DIR}/project" -B "${build}" -G "${GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()

if(MODE STREQUAL "subdirectory")
  list(APPEND configure_args "-DMETATF_SOURCE_DIR=${SOURCE_DIR}" "-DCMAKE_PREFIX_PATH=${prefix_path}")
else()
  # What gets installed must exist; usually this finds it up to date.
  step("building what installs in ${METATF_BUILD_DIR}"
    "${CMAKE_COMMAND}" --build "${METATF_BUILD_DIR}" --target installables ${config_args} --parallel ${jobs})
  step("installing ${METATF_BUILD_DIR}"
    "${CMAKE_COMMAND}" --install "${METATF_BUILD_DIR}" --prefix "${prefix}" ${config_args})

  # The installed mtf finds a shipped DTD by its name, from another directory,
  # in the prefix's share/metatf/dtds before anywhere else.
  set(dtd_dir "${prefix}/share/metatf/dtds")
  if(NOT EXISTS "${dtd_dir}/spc.dtd")
    message(FATAL_ERROR "the installation in ${prefix} has no ${dtd_dir}/spc.dtd")
  endif()
  set(mtf "${CMAKE_COMMAND}" -E env --unset=METATF_DTD_PATH "${prefix}/bin/mtf")
  step("converting SPC text with the installed mtf and --dtd spc"
    ${mtf} convert --dtd spc "${SOURCE_DIR}/examples/traces/example.spc" "${WORK_DIR}/example.mtf")
  step("checking the trace" ${mtf} check "${WORK_DIR}/example.mtf")
  if(NOT out MATCHES "ok: 11 records")
    message(FATAL_ERROR "mtf check of the converted SPC text: ${out}")
  endif()
  execute_process(COMMAND ${mtf} convert --dtd no-such-dtd in.txt out.mtf RESULT_VARIABLE code ERROR_VARIABLE err)
  if(NOT code EQUAL 1 OR NOT err MATCHES "^mtf: convert: no-such-dtd: no such file, and no shipped DTD of that name in ${dtd_dir}")
    message(FATAL_ERROR "a DTD name that names nothing: exit ${code}: ${err}")
  endif()

  file(GLOB_RECURSE config_files "${prefix}/*/MetaTFConfig.cmake")
  if(NOT config_files)
    message(FATAL_ERROR "the installation in ${prefix} has no MetaTFConfig.cmake")
  endif()
  # An installed package must stand on its own, not point back into the trees it came from.
  get_filename_component(package_dir "${config_files}" DIRECTORY)
  file(GLOB package_files "${package_dir}/*.cmake")
  foreach(f IN LISTS package_files)
    file(READ "${f}" text)
    foreach(tree IN ITEMS "${SOURCE_DIR}" "${METATF_BUILD_DIR}")
      string(FIND "${text}" "${tree}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "installed ${f} refers to ${tree}")
      endif()
    endforeach()
  endforeach()

  list(APPEND configure_args "-DCMAKE_PREFIX_PATH=${prefix};${prefix_path}")
endif()

step("configuring the consumer project" "${CMAKE_COMMAND}" ${configure_args})
message(STATUS "${out}")
if(MODE STREQUAL "installed")
  # Make sure it was this installation that was found, not another one on the system.
  file(STRINGS "${build}/CMakeCache.txt" found REGEX "^MetaTF_DIR:")
  string(REGEX REPLACE "^[^=]*=" "" found "${found}")
  if(NOT found STREQUAL package_dir)
    message(FATAL_ERROR "find_package found Meta-TF in '${found}', not in '${package_dir}'")
  endif()
endif()

step("building the consumer project" "${CMAKE_COMMAND}" --build "${build}" ${config_args} --parallel ${jobs})
# Every generation step declares the file it writes, so a second build has nothing to generate.
step("building the consumer project again" "${CMAKE_COMMAND}" --build "${build}" ${config_args} --parallel ${jobs})
if(out MATCHES "Generating")
  message(FATAL_ERROR "a second build generated headers again:\n${out}")
endif()

set(program "${build}/consumer")
if(NOT EXISTS "${program}" AND EXISTS "${build}/${BUILD_TYPE}/consumer")
  set(program "${build}/${BUILD_TYPE}/consumer")  # a multi-config generator
endif()
step("running the consumer" "${program}" "${WORK_DIR}/consumer.mtf")
message(STATUS "${out}")
