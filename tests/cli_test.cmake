# End-to-end checks of the mtfc command line: exit status, output and files.
# Run by CTest as: cmake -DMTFC=... -DSOURCE_DIR=... -DWORK_DIR=... -P cli_test.cmake

function(run expected_code)
  execute_process(COMMAND ${MTFC} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code STREQUAL expected_code)
    message(FATAL_ERROR "mtfc ${ARGN}: exit ${code}, expected ${expected_code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect text pattern)
  if(NOT text MATCHES "${pattern}")
    message(FATAL_ERROR "expected output matching '${pattern}', got:\n${text}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

run(0 --help)
expect("${out}" "Usage: mtfc \\[OPTIONS\\] FILE.dtd")
expect("${out}" "--emit=ir")
run(0 --version)
expect("${out}" "^mtfc [0-9]+\\.[0-9]+\\.[0-9]+\n$")

run(0 --check "${SOURCE_DIR}/dtds/hatf10.dtd")
if(NOT out STREQUAL "" OR NOT err STREQUAL "")
  message(FATAL_ERROR "--check of a valid DTD printed something:\n${out}${err}")
endif()

run(0 --emit=ir "${SOURCE_DIR}/dtds/hatf10.dtd")
file(READ "${SOURCE_DIR}/generated/hatf10.ir.json" golden)
if(NOT out STREQUAL golden)
  message(FATAL_ERROR "--emit=ir on stdout differs from generated/hatf10.ir.json")
endif()

run(0 --emit=ir -o "${WORK_DIR}/hatf10.json" "${SOURCE_DIR}/dtds/hatf10.dtd")
file(READ "${WORK_DIR}/hatf10.json" written)
if(NOT written STREQUAL golden)
  message(FATAL_ERROR "--emit=ir -o wrote something other than generated/hatf10.ir.json")
endif()

# Errors: exit 1, diagnostics on stderr with the source line and caret, no output file.
run(1 --emit=ir -o "${WORK_DIR}/appc.json" "${SOURCE_DIR}/tests/fixtures/paper-appendix-c.dtd")
expect("${err}" "paper-appendix-c.dtd:17:30: error: record 'realloc' has two fields named 'address'")
expect("${err}" "\n        realloc : \\(tag, address, address, time, thread, heap, vfield\\) {\n                                 \\^\n")
if(EXISTS "${WORK_DIR}/appc.json")
  message(FATAL_ERROR "mtfc wrote an output file for a DTD with errors")
endif()

# Command-line mistakes: exit 2 with a one-line reason.
run(2)
expect("${err}" "mtfc: no DTD file given")
run(2 --emit=java "${SOURCE_DIR}/dtds/hatf10.dtd")
expect("${err}" "unknown --emit kind 'java'")
run(2 --emit=cpp "${SOURCE_DIR}/dtds/hatf10.dtd")
expect("${err}" "--emit=cpp needs -o DIR")

# --emit=cpp writes DIR/NAME.hpp, creating DIR, identical to the golden copy.
run(0 --emit=cpp -o "${WORK_DIR}/gen/sub" "${SOURCE_DIR}/dtds/hatf10.dtd")
file(READ "${WORK_DIR}/gen/sub/hatf10.hpp" header)
file(READ "${SOURCE_DIR}/generated/hatf10.hpp" golden_header)
if(NOT header STREQUAL golden_header)
  message(FATAL_ERROR "--emit=cpp wrote something other than generated/hatf10.hpp")
endif()
run(2 --frobnicate)
expect("${err}" "unknown option '--frobnicate'")
run(2 a.dtd b.dtd)
run(2 --emit=ir -o)
run(1 "${WORK_DIR}/does-not-exist.dtd")
expect("${err}" "does-not-exist.dtd: error: cannot read the file")
run(2 --emit=ir -o "${WORK_DIR}/no/such/dir/out.json" "${SOURCE_DIR}/dtds/hatf10.dtd")
expect("${err}" "cannot write")

# '-' reads the DTD from standard input.
execute_process(COMMAND ${MTFC} --emit=ir - INPUT_FILE "${SOURCE_DIR}/dtds/hatf10.dtd"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"dtd\": \"stdin\"")
  message(FATAL_ERROR "mtfc - failed: ${code}\n${err}")
endif()
execute_process(COMMAND ${MTFC} - INPUT_FILE "${SOURCE_DIR}/tests/fixtures/paper-appendix-c.dtd"
                RESULT_VARIABLE code ERROR_VARIABLE err)
if(NOT code EQUAL 1 OR NOT err MATCHES "stdin:17:30: error:")
  message(FATAL_ERROR "mtfc - on a bad DTD: ${code}\n${err}")
endif()
