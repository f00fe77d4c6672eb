# mtf on CHARISMA's native files in both machine layouts: the independent C
# writers still make the checked-in files, which convert to Meta-TF and back
# and into each other byte for byte, dump field by field alike, are told
# apart by their magic, and malformed files and values the layouts cannot
# hold are refused exactly.
# Run by CTest as: cmake -DMTF=... -DWRITER_IPSC860=... -DWRITER_LP64=... -DSOURCE_DIR=... -DWORK_DIR=... -P charisma_test.cmake

set(ipsc tests/fixtures/native/charisma-ipsc860.bin)
set(lp64 tests/fixtures/native/charisma-lp64.bin)
set(dtd dtds/charisma.dtd)
set(here "${SOURCE_DIR}/tests/native")

include(${CMAKE_CURRENT_LIST_DIR}/../script_checks.cmake)

# A failure of mtf: exit status `status` and the exact line on stderr.
function(fails status line)
  run_in_source(${status} ${MTF} ${ARGN})
  expect_equal("mtf ${ARGN}" "${err}" "${line}\n")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# The writers, C programs that know nothing of Meta-TF, make the checked-in bytes.
run_in_source(0 ${WRITER_IPSC860} "${WORK_DIR}/written.ipsc")
same_bytes("the iPSC/860 writer's file" "${WORK_DIR}/written.ipsc" "${SOURCE_DIR}/${ipsc}")
run_in_source(0 ${WRITER_LP64} "${WORK_DIR}/written.lp64")
same_bytes("the LP64 writer's file" "${WORK_DIR}/written.lp64" "${SOURCE_DIR}/${lp64}")

# Each layout: native -> Meta-TF -> native, byte for byte; the form is found by the magic.
foreach(form ipsc860 lp64)
  if(form STREQUAL "ipsc860")
    set(file ${ipsc})
  else()
    set(file ${lp64})
  endif()
  run_in_source(0 ${MTF} convert --native --dtd ${dtd} ${file} "${WORK_DIR}/${form}.mtf")
  run_in_source(0 ${MTF} convert --native --form ${form} "${WORK_DIR}/${form}.mtf" "${WORK_DIR}/${form}.back")
  same_bytes("${form}: native -> Meta-TF -> native" "${WORK_DIR}/${form}.back" "${SOURCE_DIR}/${file}")
  # Every value, field by field: the two layouts hold the same records.
  run_in_source(0 ${MTF} dump --no-meta "${WORK_DIR}/${form}.mtf")
  file(READ "${here}/charisma.dump" want)
  expect_equal("${form}: dump of the converted file" "${out}" "${want}")
  run_in_source(0 ${MTF} dump --native --dtd ${dtd} ${file})
  expect_equal("${form}: dump --native" "${out}" "${want}")
endforeach()

# Each layout into the other, byte for byte.
run_in_source(0 ${MTF} convert --native --form lp64 "${WORK_DIR}/ipsc860.mtf" "${WORK_DIR}/ipsc-as-lp64")
same_bytes("iPSC/860 -> Meta-TF -> LP64" "${WORK_DIR}/ipsc-as-lp64" "${SOURCE_DIR}/${lp64}")
run_in_source(0 ${MTF} convert --native --form ipsc860 "${WORK_DIR}/lp64.mtf" "${WORK_DIR}/lp64-as-ipsc")
same_bytes("LP64 -> Meta-TF -> iPSC/860" "${WORK_DIR}/lp64-as-ipsc" "${SOURCE_DIR}/${ipsc}")

# check reads a native file; a named form must match the file's magic.
run_in_source(0 ${MTF} check --native --dtd ${dtd} --form ipsc860 ${ipsc})
expect_equal("check --native --form" "${out}" "${ipsc}: ok: 17 records, 1 section with data, 1372 bytes\n")
fails(1 "mtf: check: ${lp64}: the file does not start with the magic bytes 01 23 45 67 00 00 00 01 of the native form 'ipsc860' of 'charisma' (it starts 67 45 23 01 01 00 00 00)"
      check --native --dtd ${dtd} --form ipsc860 ${lp64})
file(WRITE "${WORK_DIR}/other.bin" "not a CHARISMA file")
fails(1 "mtf: check: ${WORK_DIR}/other.bin: the file starts with the magic bytes of none of the native forms of 'charisma' (ipsc860 01 23 45 67 00 00 00 01, lp64 67 45 23 01 01 00 00 00); it starts 6e 6f 74 20 61 20 43 48"
      check --native --dtd ${dtd} "${WORK_DIR}/other.bin")
fails(1 "mtf: check: ${dtd}: the DTD 'charisma' describes no native binary form 'sparc' (it has ipsc860, lp64)"
      check --native --dtd ${dtd} --form sparc ${lp64})

# The rules charisma.dtd states: a system type the header does not name, and
# open flags and operation bits outside their sets, are reported with their records.
run_in_source(0 ${WRITER_LP64} "${WORK_DIR}/type9.lp64" 9)
run_in_source(1 ${MTF} check --native --dtd ${dtd} "${WORK_DIR}/type9.lp64")
expect_equal("check of an unknown system type" "${out}"
  "${WORK_DIR}/type9.lp64: record 0 (header), field 'systemType' is 9, which its enumeration does not name\n${WORK_DIR}/type9.lp64: 1 rule violation in 1 record\n")
run_in_source(0 ${MTF} dump --native --dtd ${dtd} --where operationType=write --fields operationType ${lp64})
expect_equal("dump --where by names" "${out}" "readWrite operationType=write\n")
run_in_source(0 ${MTF} dump --native --dtd ${dtd} --where "operationType=asynchronous|clientRequest" --fields operationType ${lp64})
expect_equal("dump --where by flags" "${out}" "readWrite operationType=asynchronous|clientRequest\n")
run_in_source(0 ${MTF} dump --format jsonl --native --dtd ${dtd} "${WORK_DIR}/type9.lp64" --fields systemType --limit 1)
expect_equal("an unnamed enum value in JSON" "${out}" "{\"record\":\"header\",\"index\":0,\"section\":0,\"fields\":{\"systemType\":\"9\"}}\n")

# A converted trace starts with a comment naming its form, which writing takes without --form.
run_in_source(0 ${MTF} dump --meta --record comment "${WORK_DIR}/lp64.mtf")
expect_equal("the form's comment" "${out}" "comment length=17 data=\"native form: lp64\"\n")
run_in_source(0 ${MTF} convert --native "${WORK_DIR}/lp64.mtf" "${WORK_DIR}/remembered.lp64")
same_bytes("LP64 -> Meta-TF -> the form remembered" "${WORK_DIR}/remembered.lp64" "${SOURCE_DIR}/${lp64}")
# --form is for native files only.
fails(2 "mtf: convert: --form names a native form: it goes with --native (see 'mtf convert --help')"
      convert --form lp64 "${WORK_DIR}/lp64.mtf" "${WORK_DIR}/text.txt")

# The file cut inside the last record's padding: the LP64 appExit record is 24 bytes, 4 of them padding.
file(SIZE "${SOURCE_DIR}/${lp64}" size)
math(EXPR cut "${size} - 2")
execute_process(COMMAND head -c ${cut} ${lp64} OUTPUT_FILE "${WORK_DIR}/cut.lp64" WORKING_DIRECTORY "${SOURCE_DIR}")
fails(1 "mtf: convert: ${WORK_DIR}/cut.lp64: byte ${cut}, record 16: the file ends inside record 16"
      convert --native --dtd ${dtd} "${WORK_DIR}/cut.lp64" "${WORK_DIR}/cut.mtf")
if(EXISTS "${WORK_DIR}/cut.mtf" OR EXISTS "${WORK_DIR}/text.txt")
  message(FATAL_ERROR "a failed conversion left its output")
endif()
