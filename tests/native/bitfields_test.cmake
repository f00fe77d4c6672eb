# mtf on bit fields in both allocation orders (tests/native/bitfields.dtd):
# GCC still makes the checked-in files; each converts to Meta-TF, dumps the
# same parts by name, and converts into the other order byte for byte;
# parts select records; bits no part holds are kept and reported by check.
# Run by CTest as: cmake -DMTF=... -DWRITER_LSB=... -DWRITER_MSB=... -DSOURCE_DIR=... -DWORK_DIR=... -P bitfields_test.cmake

set(dtd tests/native/bitfields.dtd)
set(here "${SOURCE_DIR}/tests/native")

include(${CMAKE_CURRENT_LIST_DIR}/../script_checks.cmake)

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

foreach(order lsb msb)
  set(file tests/fixtures/native/bitfields-${order}.bin)
  string(TOUPPER ${order} upper)
  run_in_source(0 ${WRITER_${upper}} "${WORK_DIR}/written.${order}")
  same_bytes("GCC's ${order}-first file" "${WORK_DIR}/written.${order}" "${SOURCE_DIR}/${file}")
  run_in_source(0 ${MTF} convert --native --dtd ${dtd} --form ${order} ${file} "${WORK_DIR}/${order}.mtf")
  run_in_source(0 ${MTF} dump --no-meta "${WORK_DIR}/${order}.mtf")
  file(READ "${here}/bitfields.dump" want)
  expect_equal("${order}: the parts by name" "${out}" "${want}")
endforeach()

# Each order into the other, byte for byte: the parts and the unnamed bits move.
run_in_source(0 ${MTF} convert --native --form msb "${WORK_DIR}/lsb.mtf" "${WORK_DIR}/lsb-as-msb")
same_bytes("lsb -> Meta-TF -> msb" "${WORK_DIR}/lsb-as-msb" "${SOURCE_DIR}/tests/fixtures/native/bitfields-msb.bin")
run_in_source(0 ${MTF} convert --native --form lsb "${WORK_DIR}/msb.mtf" "${WORK_DIR}/msb-as-lsb")
same_bytes("msb -> Meta-TF -> lsb" "${WORK_DIR}/msb-as-lsb" "${SOURCE_DIR}/tests/fixtures/native/bitfields-lsb.bin")

# A record found by its parts, as dump writes them.
run_in_source(0 ${MTF} dump --no-meta --where "modeBits=mode:3,level:21,zone:15,0x3000" --fields clientId,modeBits "${WORK_DIR}/msb.mtf")
expect_equal("dump --where by parts" "${out}" "compressed clientId=3 modeBits=mode:3,level:21,zone:15,0x3000\n")

# The four spare bits are in no part: check reports each record that sets them
# (record 6 of the trace, whose record 0 is the comment naming its form).
run_in_source(1 ${MTF} check "${WORK_DIR}/msb.mtf")
string(REGEX MATCH "[^\n]*record 6 \\(compressed\\)[^\n]*" first "${out}")
expect_equal("check: bits in no part" "${first}"
  "${WORK_DIR}/msb.mtf: record 6 (compressed), field 'modeBits' is 0x3fab, whose bits 0x3000 are in none of its parts")
