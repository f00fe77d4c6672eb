# mtf on PTF's native binary form: the independent C writer still makes the
# checked-in file, which converts to Meta-TF and back byte for byte, dumps
# field by field, becomes PTF text, and malformed files are refused exactly.
# Run by CTest as: cmake -DMTF=... -DWRITER=... -DSOURCE_DIR=... -DWORK_DIR=... -P native_test.cmake

set(fixture tests/fixtures/native/ptf-example.ptfb)
set(here "${SOURCE_DIR}/tests/native")

include(${CMAKE_CURRENT_LIST_DIR}/../script_checks.cmake)

# A failure of mtf: exit status 1 and the exact line on stderr.
function(fails line)
  run_in_source(1 ${MTF} ${ARGN})
  expect_equal("mtf ${ARGN}" "${err}" "${line}\n")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# The writer, a C program that knows nothing of Meta-TF, makes the checked-in bytes.
run_in_source(0 ${WRITER} "${WORK_DIR}/written.ptfb")
same_bytes("the C writer's file" "${WORK_DIR}/written.ptfb" "${SOURCE_DIR}/${fixture}")

# Native binary -> Meta-TF -> native binary, byte for byte.
run_in_source(0 ${MTF} convert --native --dtd dtds/ptf.dtd ${fixture} "${WORK_DIR}/example.mtf")
run_in_source(0 ${MTF} convert --native "${WORK_DIR}/example.mtf" "${WORK_DIR}/back.ptfb")
same_bytes("native -> Meta-TF -> native" "${WORK_DIR}/back.ptfb" "${SOURCE_DIR}/${fixture}")

# Every value, field by field, and the header as the first comment.
run_in_source(0 ${MTF} dump --no-meta "${WORK_DIR}/example.mtf")
file(READ "${here}/ptf-example.dump" want)
expect_equal("dump of the converted file" "${out}" "${want}")
run_in_source(0 ${MTF} dump --record comment "${WORK_DIR}/example.mtf")
expect_equal("the header as a comment" "${out}"
  "comment length=73 data=\"PTF 1.0\\nbinary tree example, written by tests/native/ptf_binary_writer.c\\n\"\n")

# To PTF text (the header left out, with a warning), and from text back to native binary with an empty header.
run_in_source(0 ${MTF} convert "${WORK_DIR}/example.mtf" "${WORK_DIR}/example.ptf")
expect_equal("the warning" "${err}"
  "mtf: convert: ${WORK_DIR}/example.mtf: warning: left out 1 comment record(s), which the text form cannot hold\n")
same_bytes("native -> Meta-TF -> text" "${WORK_DIR}/example.ptf" "${here}/ptf-example.ptf")
run_in_source(0 ${MTF} convert --dtd dtds/ptf.dtd "${here}/ptf-example.ptf" "${WORK_DIR}/from-text.mtf")
run_in_source(0 ${MTF} convert --native "${WORK_DIR}/from-text.mtf" "${WORK_DIR}/from-text.ptfb")
file(READ "${WORK_DIR}/from-text.ptfb" got HEX)
file(READ "${SOURCE_DIR}/${fixture}" whole HEX)
string(FIND "${whole}" "0a240a" at)  # the events start after "\n$\n"
math(EXPR at "${at} + 6")
string(SUBSTRING "${whole}" ${at} -1 events)
expect_equal("text -> Meta-TF -> native" "${got}" "240a${events}")

# Malformed native files: each refused with its byte offset.
execute_process(COMMAND head -c 259 ${fixture} OUTPUT_FILE "${WORK_DIR}/cut.ptfb" WORKING_DIRECTORY "${SOURCE_DIR}")
fails("mtf: convert: ${WORK_DIR}/cut.ptfb: byte 259, record 15: the file ends inside record 15"
      convert --native --dtd dtds/ptf.dtd "${WORK_DIR}/cut.ptfb" "${WORK_DIR}/cut.mtf")
file(WRITE "${WORK_DIR}/code.ptfb" "PTF 1.0\n$\nc")
fails("mtf: convert: ${WORK_DIR}/code.ptfb: byte 10, record 1: no record has the type code 99 (bytes 63)"
      convert --native --dtd dtds/ptf.dtd "${WORK_DIR}/code.ptfb" "${WORK_DIR}/code.mtf")
file(WRITE "${WORK_DIR}/header.ptfb" "PTF 1.0\nnotes\n")
fails("mtf: convert: ${WORK_DIR}/header.ptfb: byte 14, record 0: the file ends before the header's end line '$'"
      convert --native --dtd dtds/ptf.dtd "${WORK_DIR}/header.ptfb" "${WORK_DIR}/header.mtf")
# A header is the trace's first comment: up to 65,535 bytes, back byte for byte.
string(REPEAT "n" 65000 notes)
file(WRITE "${WORK_DIR}/long.ptfb" "PTF 1.0 ${notes}\n$\n")
run_in_source(0 ${MTF} convert -f --native --dtd dtds/ptf.dtd "${WORK_DIR}/long.ptfb" "${WORK_DIR}/long.mtf")
run_in_source(0 ${MTF} convert -f --native "${WORK_DIR}/long.mtf" "${WORK_DIR}/long-back.ptfb")
file(READ "${WORK_DIR}/long-back.ptfb" back)
expect_equal("a 65,009-byte header, back" "${back}" "PTF 1.0 ${notes}\n$\n")
string(REPEAT "n" 66000 notes)
file(WRITE "${WORK_DIR}/huge.ptfb" "PTF 1.0 ${notes}\n$\n")
fails("mtf: convert: ${WORK_DIR}/huge.mtf: byte 0, section 0, record 0: a comment holds at most 65535 bytes, not 66009"
      convert --native --dtd dtds/ptf.dtd "${WORK_DIR}/huge.ptfb" "${WORK_DIR}/huge.mtf")
if(EXISTS "${WORK_DIR}/cut.mtf" OR EXISTS "${WORK_DIR}/code.mtf" OR EXISTS "${WORK_DIR}/header.mtf" OR EXISTS "${WORK_DIR}/huge.mtf")
  message(FATAL_ERROR "a failed conversion left its output")
endif()

# A value the native field cannot hold is refused when writing, not cut.
file(WRITE "${WORK_DIR}/wide.ptf" "Trace begin\ndw 41 44 70000\nTrace end\n")
run_in_source(0 ${MTF} convert --dtd dtds/ptf.dtd "${WORK_DIR}/wide.ptf" "${WORK_DIR}/wide.mtf")
fails("mtf: convert: ${WORK_DIR}/wide.mtf: record 1: field 'offset' of record 'dw' holds 70000, more than its 2 bytes can"
      convert --native "${WORK_DIR}/wide.mtf" "${WORK_DIR}/wide.ptfb")
fails("mtf: convert: dtds/spc.dtd: the DTD 'spc' describes no native binary form"
      convert --native --dtd dtds/spc.dtd ${fixture} "${WORK_DIR}/spc.mtf")

# dump, check and stats read the native file itself.
run_in_source(0 ${MTF} dump --native --dtd dtds/ptf.dtd --no-meta ${fixture})
file(READ "${here}/ptf-example.dump" want)
expect_equal("dump --native" "${out}" "${want}")
run_in_source(0 ${MTF} check --native --dtd dtds/ptf.dtd ${fixture})
expect_equal("check --native" "${out}" "${fixture}: ok: 16 records, 1 section with data, 260 bytes\n")
run_in_source(0 ${MTF} stats --native --dtd dtds/ptf.dtd --json ${fixture})
string(JSON co_count GET "${out}" records 4 count)
expect_equal("stats --native: co events" "${co_count}" "2")
fails("mtf: check: ${WORK_DIR}/cut.ptfb: byte 259, record 15: the file ends inside record 15"
      check --native --dtd dtds/ptf.dtd "${WORK_DIR}/cut.ptfb")
run_in_source(2 ${MTF} check --native ${fixture})
expect_equal("check --native without --dtd" "${err}" "mtf: check: reading a native file needs the format's DTD: --dtd FILE (see 'mtf check --help')\n")
