# End-to-end checks of the mtfc command line: exit status, output and files.
# Run by CTest as: cmake -DMTFC=... -DVERSION=... -DSOURCE_DIR=... -DWORK_DIR=... -P cli_test.cmake

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

function(expect_exact what text expected)
  if(NOT text STREQUAL expected)
    message(FATAL_ERROR "${what}:\n${text}\nexpected exactly:\n${expected}")
  endif()
endfunction()

# A command-line mistake: exit 2, and on standard error exactly the reason and the hint.
function(usage_error message)
  run(2 ${ARGN})
  expect_exact("mtfc ${ARGN}: stderr" "${err}" "mtfc: ${message}\nTry 'mtfc --help'.\n")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

run(0 --help)
expect("${out}" "^Usage: mtfc \\[OPTIONS\\] FILE.dtd\n")
expect("${out}" "--emit ir")
set(help "${out}")
run(0 -h)
expect_exact("-h" "${out}" "${help}")
run(0 --version)
expect_exact("--version" "${out}" "mtfc ${VERSION}\n")
run(0 -V)
expect_exact("-V" "${out}" "mtfc ${VERSION}\n")

run(0 --check "${SOURCE_DIR}/dtds/hatf10.dtd")
if(NOT out STREQUAL "" OR NOT err STREQUAL "")
  message(FATAL_ERROR "--check of a valid DTD printed something:\n${out}${err}")
endif()

run(0 --emit=ir "${SOURCE_DIR}/dtds/hatf10.dtd")
file(READ "${SOURCE_DIR}/generated/hatf10.ir.json" golden)
if(NOT out STREQUAL golden)
  message(FATAL_ERROR "--emit=ir on stdout differs from generated/hatf10.ir.json")
endif()

run(0 --emit ir "${SOURCE_DIR}/dtds/hatf10.dtd")
expect_exact("--emit ir (a separate value)" "${out}" "${golden}")

# -o, --output FILE and --output=FILE.
foreach(option IN ITEMS "-o;${WORK_DIR}/hatf10.json" "--output;${WORK_DIR}/hatf10.json" "--output=${WORK_DIR}/hatf10.json")
  file(REMOVE "${WORK_DIR}/hatf10.json")
  run(0 --emit=ir ${option} "${SOURCE_DIR}/dtds/hatf10.dtd")
  file(READ "${WORK_DIR}/hatf10.json" written)
  expect_exact("--emit=ir ${option} wrote" "${written}" "${golden}")
endforeach()

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
usage_error("unknown option '--frobnicate'" --frobnicate)
usage_error("one DTD file at a time" a.dtd b.dtd)
usage_error("-o needs a value" --emit=ir -o)
usage_error("--name needs a value" x.dtd --name)
usage_error("--emit is given twice" --emit=ir --emit cpp x.dtd)
usage_error("-o is given twice" --emit=ir -o a.json --output b.json x.dtd)
usage_error("--check and --emit exclude each other" --check --emit=ir x.dtd)
usage_error("-o needs --emit: a check writes no output" -o a.json x.dtd)
usage_error("--namespace needs --emit=cpp" --emit=ir --namespace n x.dtd)
usage_error("--namespace 'stdin' is a C++ keyword or a name that may be a macro" --emit=cpp -o d --namespace stdin x.dtd)
usage_error("--namespace 'a.b' is not a C++ identifier (letters, digits and '_', not starting with a digit)"
            --emit=cpp -o d --namespace=a.b x.dtd)
usage_error("--name 'a/b' has a '/'" --emit=ir --name a/b x.dtd)
usage_error("--name '' is not a file name" --emit=ir --name= x.dtd)

# Every message about a file names it, and says what went wrong.
run(1 "${WORK_DIR}/does-not-exist.dtd")
expect_exact("a missing DTD" "${err}" "${WORK_DIR}/does-not-exist.dtd: error: cannot read the file: No such file or directory\n")
run(1 "${WORK_DIR}")
expect_exact("a directory as the DTD" "${err}" "${WORK_DIR}: error: cannot read the file: Is a directory\n")
execute_process(COMMAND ${MTFC} - INPUT_FILE "${WORK_DIR}" RESULT_VARIABLE code ERROR_VARIABLE err)
expect_exact("a directory as standard input" "${code}: ${err}" "1: stdin: error: cannot read the file: Is a directory\n")
file(WRITE "${WORK_DIR}/plain" "")
run(2 --emit=cpp -o "${WORK_DIR}/plain/sub" "${SOURCE_DIR}/dtds/hatf10.dtd")
expect_exact("-o under a regular file" "${err}" "mtfc: cannot create the directory '${WORK_DIR}/plain/sub': Not a directory\n")
run(2 --emit=ir -o "${WORK_DIR}/no/such/dir/out.json" "${SOURCE_DIR}/dtds/hatf10.dtd")
expect_exact("-o in a missing directory" "${err}"
  "mtfc: ${WORK_DIR}/no/such/dir/out.json: cannot create a temporary file beside it: No such file or directory\n")

# Output files follow mtf's rules (docs/mtf.md, "Output files"): kept without -f, replaced with it.
file(WRITE "${WORK_DIR}/kept.json" "precious")
run(2 --emit=ir -o "${WORK_DIR}/kept.json" "${SOURCE_DIR}/dtds/hatf10.dtd")
expect_exact("an existing -o file" "${err}" "mtfc: ${WORK_DIR}/kept.json: exists; use -f (--force) to replace it\n")
file(READ "${WORK_DIR}/kept.json" kept)
expect_exact("a file kept without -f" "${kept}" "precious")
run(0 --emit=ir -f -o "${WORK_DIR}/kept.json" "${SOURCE_DIR}/dtds/hatf10.dtd")
file(READ "${WORK_DIR}/kept.json" written)
expect_exact("-f replaced the file with" "${written}" "${golden}")
run(2 --emit=cpp -o "${WORK_DIR}/gen/sub" "${SOURCE_DIR}/dtds/hatf10.dtd")
expect_exact("a generated header again" "${err}" "mtfc: ${WORK_DIR}/gen/sub/hatf10.hpp: exists; use -f (--force) to replace it\n")
run(0 --emit=cpp --force -o "${WORK_DIR}/gen/sub" "${SOURCE_DIR}/dtds/hatf10.dtd")
# A file that already holds the output is left alone (a build then recompiles nothing).
file(TIMESTAMP "${WORK_DIR}/gen/sub/hatf10.hpp" before "%s")
execute_process(COMMAND sleep 1.1)
run(0 --emit=cpp --force -o "${WORK_DIR}/gen/sub" "${SOURCE_DIR}/dtds/hatf10.dtd")
file(TIMESTAMP "${WORK_DIR}/gen/sub/hatf10.hpp" after "%s")
expect_exact("an unchanged header keeps its time" "${after}" "${before}")
usage_error("-f needs -o: only an output file is replaced" -f --emit=ir x.dtd)
usage_error("-f is given twice" -f --force --emit=ir -o a.json x.dtd)
# The DTD itself is never the output.
file(COPY "${SOURCE_DIR}/dtds/hatf10.dtd" DESTINATION "${WORK_DIR}")
run(2 --emit=ir -f -o "${WORK_DIR}/hatf10.dtd" "${WORK_DIR}/hatf10.dtd")
expect_exact("-o naming the DTD" "${err}" "mtfc: ${WORK_DIR}/hatf10.dtd: is also an input; write the output to another file\n")
# A symbolic link is written through, a FIFO in place.
file(CREATE_LINK "ir-target.json" "${WORK_DIR}/ir-link.json" SYMBOLIC)
run(0 --emit=ir -o "${WORK_DIR}/ir-link.json" "${SOURCE_DIR}/dtds/hatf10.dtd")
if(NOT IS_SYMLINK "${WORK_DIR}/ir-link.json" OR NOT EXISTS "${WORK_DIR}/ir-target.json")
  message(FATAL_ERROR "mtfc -o through a symbolic link replaced the link")
endif()
execute_process(COMMAND mkfifo "${WORK_DIR}/fifo")
execute_process(COMMAND ${MTFC} --emit=ir -o "${WORK_DIR}/fifo" "${SOURCE_DIR}/dtds/hatf10.dtd"
                COMMAND timeout 60 cat "${WORK_DIR}/fifo" OUTPUT_VARIABLE from_fifo RESULTS_VARIABLE codes)
expect_exact("mtfc -o FIFO" "${codes}" "0;0")
expect_exact("the IR through a FIFO" "${from_fifo}" "${golden}")

# A standard output that cannot be written is an error with its reason, never a silent exit.
if(EXISTS /dev/full)
  foreach(args IN ITEMS "--emit=ir;${SOURCE_DIR}/dtds/hatf10.dtd" --help --version)
    execute_process(COMMAND ${MTFC} ${args} OUTPUT_FILE /dev/full RESULT_VARIABLE code ERROR_VARIABLE err)
    expect_exact("mtfc ${args} > /dev/full" "${code}: ${err}" "2: mtfc: cannot write to standard output: No space left on device\n")
  endforeach()
endif()

# '-' reads the DTD from standard input.
execute_process(COMMAND ${MTFC} --emit=ir - INPUT_FILE "${SOURCE_DIR}/dtds/hatf10.dtd"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"dtd\": \"stdin\"")
  message(FATAL_ERROR "mtfc - failed: ${code}\n${err}")
endif()
# --name names the DTD, from a file or from standard input.
execute_process(COMMAND ${MTFC} --emit=ir --name hatf - INPUT_FILE "${SOURCE_DIR}/dtds/hatf10.dtd"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "\n  \"dtd\": \"hatf\",\n")
  message(FATAL_ERROR "mtfc --name hatf - failed: ${code}\n${err}")
endif()
run(0 --emit=ir --name=h.v2 "${SOURCE_DIR}/dtds/hatf10.dtd")
expect("${out}" "\n  \"dtd\": \"h.v2\",\n")
execute_process(COMMAND ${MTFC} - INPUT_FILE "${SOURCE_DIR}/tests/fixtures/paper-appendix-c.dtd"
                RESULT_VARIABLE code ERROR_VARIABLE err)
if(NOT code EQUAL 1 OR NOT err MATCHES "stdin:17:30: error:")
  message(FATAL_ERROR "mtfc - on a bad DTD: ${code}\n${err}")
endif()
