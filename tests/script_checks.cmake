# Helpers of the CTest scripts that run commands from the source tree
# (tests/mtf/cli_test.cmake, tests/native/*_test.cmake). Needs SOURCE_DIR.

# Runs a command from SOURCE_DIR; its exit status must be `expected_code`.
# Sets `out` and `err` in the caller.
function(run_in_source expected_code)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${SOURCE_DIR}"
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code STREQUAL expected_code)
    message(FATAL_ERROR "${ARGN}: exit ${code}, expected ${expected_code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect_equal what got want)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${what}: expected\n${want}\ngot\n${got}")
  endif()
endfunction()

# Files `a` and `b` hold the same bytes.
function(same_bytes what a b)
  file(READ "${a}" x HEX)
  file(READ "${b}" y HEX)
  expect_equal("${what}" "${x}" "${y}")
endfunction()
