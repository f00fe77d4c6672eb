# mtf on libpcap's classic capture files in both byte orders and both
# timestamp units: the independent C writer still makes the checked-in
# files, which convert to Meta-TF and back and into each other's byte order
# byte for byte, dump their fields as numbers, are told apart by their
# magic, and malformed files are refused exactly.
# Run by CTest as: cmake -DMTF=... -DWRITER=... -DSOURCE_DIR=... -DWORK_DIR=... -P pcap_test.cmake

set(dtd dtds/pcap.dtd)
set(fixtures tests/fixtures/native)
set(here "${SOURCE_DIR}/tests/native")

include(${CMAKE_CURRENT_LIST_DIR}/../script_checks.cmake)

# A failure of mtf: exit status 1 and the exact line on stderr.
function(fails line)
  run_in_source(1 ${MTF} ${ARGN})
  expect_equal("mtf ${ARGN}" "${err}" "${line}\n")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

foreach(order le be)
  foreach(unit usec nsec)
    set(file ${fixtures}/pcap-${order}-${unit}.pcap)
    # The writer, a C program that knows nothing of Meta-TF, makes the checked-in bytes.
    run_in_source(0 ${WRITER} ${order} ${unit} "${WORK_DIR}/written.pcap")
    same_bytes("the C writer's ${order} ${unit} file" "${WORK_DIR}/written.pcap" "${SOURCE_DIR}/${file}")
    # pcap -> Meta-TF -> pcap, byte for byte; the form is found by the magic
    # and remembered by the trace's first comment.
    run_in_source(0 ${MTF} convert --native --dtd ${dtd} ${file} "${WORK_DIR}/${order}-${unit}.mtf")
    run_in_source(0 ${MTF} dump --meta --record comment "${WORK_DIR}/${order}-${unit}.mtf")
    expect_equal("${order} ${unit}: the form's comment" "${out}" "comment length=20 data=\"native form: ${order}_${unit}\"\n")
    run_in_source(0 ${MTF} convert --native "${WORK_DIR}/${order}-${unit}.mtf" "${WORK_DIR}/${order}-${unit}.back")
    same_bytes("${order} ${unit}: pcap -> Meta-TF -> pcap" "${WORK_DIR}/${order}-${unit}.back" "${SOURCE_DIR}/${file}")
    # The header's and the packets' fields as numbers, whatever the byte order.
    file(READ "${here}/pcap-${unit}.dump" want)
    run_in_source(0 ${MTF} dump --no-meta "${WORK_DIR}/${order}-${unit}.mtf")
    expect_equal("${order} ${unit}: dump of the converted file" "${out}" "${want}")
    run_in_source(0 ${MTF} dump --native --dtd ${dtd} ${file})
    expect_equal("${order} ${unit}: dump --native" "${out}" "${want}")
  endforeach()
endforeach()

# A little-endian capture written as a big-endian one is the big-endian writer's file.
run_in_source(0 ${MTF} convert --native --form be_usec "${WORK_DIR}/le-usec.mtf" "${WORK_DIR}/le-as-be.pcap")
same_bytes("little-endian -> Meta-TF -> big-endian" "${WORK_DIR}/le-as-be.pcap" "${SOURCE_DIR}/${fixtures}/pcap-be-usec.pcap")

# A trace that names no form (read with a DTD of one form, which needs no
# comment) is written with the four-form DTD only given --form.
file(READ "${SOURCE_DIR}/${dtd}" text)
string(REGEX REPLACE "native (be_usec|le_nsec|be_nsec) [^\n]*\n" "" text "${text}")
file(WRITE "${WORK_DIR}/one/pcap.dtd" "${text}")
run_in_source(0 ${MTF} convert --native --dtd "${WORK_DIR}/one/pcap.dtd" ${fixtures}/pcap-le-usec.pcap "${WORK_DIR}/unnamed.mtf")
run_in_source(0 ${MTF} dump --meta --record comment "${WORK_DIR}/unnamed.mtf")
expect_equal("no form's comment with one form" "${out}" "")
run_in_source(2 ${MTF} convert --native --dtd ${dtd} "${WORK_DIR}/unnamed.mtf" "${WORK_DIR}/unnamed.pcap")
expect_equal("writing without a form" "${err}"
  "mtf: convert: the DTD 'pcap' describes several native binary forms: name one with --form (le_usec, be_usec, le_nsec, be_nsec) (see 'mtf convert --help')\n")
run_in_source(0 ${MTF} convert --native --dtd ${dtd} --form le_usec "${WORK_DIR}/unnamed.mtf" "${WORK_DIR}/unnamed.pcap")
same_bytes("a trace without the form's comment, --form le_usec" "${WORK_DIR}/unnamed.pcap" "${SOURCE_DIR}/${fixtures}/pcap-le-usec.pcap")

# The packet fields as CSV numbers.
run_in_source(0 ${MTF} dump --native --dtd ${dtd} --record packet --fields ts_sec,ts_usec,incl_len,orig_len --format csv ${fixtures}/pcap-be-nsec.pcap)
expect_equal("packet fields as CSV" "${out}"
  "ts_sec,ts_usec,incl_len,orig_len\n1700000000,999999999,0,0\n1700000001,999999998,1,1\n1700000002,999999997,60,60\n1700000003,999999996,96,1514\n")

# Not a pcap file: no form's magic, each listed in hex.
file(WRITE "${WORK_DIR}/pcapng.bin" "\n\r\r\nnot classic pcap")
fails("mtf: check: ${WORK_DIR}/pcapng.bin: the file starts with the magic bytes of none of the native forms of 'pcap' (le_usec d4 c3 b2 a1, be_usec a1 b2 c3 d4, le_nsec 4d 3c b2 a1, be_nsec a1 b2 3c 4d); it starts 0a 0d 0d 0a"
      check --native --dtd ${dtd} "${WORK_DIR}/pcapng.bin")
# Cut inside the file header, and inside the last packet's bytes.
execute_process(COMMAND head -c 20 ${fixtures}/pcap-le-usec.pcap OUTPUT_FILE "${WORK_DIR}/cut-header.pcap" WORKING_DIRECTORY "${SOURCE_DIR}")
fails("mtf: convert: ${WORK_DIR}/cut-header.pcap: byte 20, record 0: the file ends inside record 0"
      convert --native --dtd ${dtd} "${WORK_DIR}/cut-header.pcap" "${WORK_DIR}/cut-header.mtf")
file(SIZE "${SOURCE_DIR}/${fixtures}/pcap-le-usec.pcap" size)
math(EXPR cut "${size} - 1")
execute_process(COMMAND head -c ${cut} ${fixtures}/pcap-le-usec.pcap OUTPUT_FILE "${WORK_DIR}/cut.pcap" WORKING_DIRECTORY "${SOURCE_DIR}")
fails("mtf: convert: ${WORK_DIR}/cut.pcap: byte ${cut}, record 4: the file ends inside record 4"
      convert --native --dtd ${dtd} "${WORK_DIR}/cut.pcap" "${WORK_DIR}/cut.mtf")
if(EXISTS "${WORK_DIR}/cut-header.mtf" OR EXISTS "${WORK_DIR}/cut.mtf")
  message(FATAL_ERROR "a failed conversion left its output")
endif()
