# Conformance of the shipped DTDs to the documents they follow
# (docs/conformance.md): lines written from each document alone go through
# `mtf convert` to a Meta-TF trace and back, `mtf check` passes the trace,
# lines the document rules out are refused, the rules a document states are
# reported by `mtf check`, and the DTDs written from the ISMM 2000 paper
# compile with mtfc.
# Run by CTest as:
#   cmake -DMTF=... -DMTFC=... -DSOURCE_DIR=... -DWORK_DIR=... -P conformance_test.cmake

include(${CMAKE_CURRENT_LIST_DIR}/../script_checks.cmake)

set(here tests/conformance)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Text to trace to text. INPUT must come back as the bytes of EXPECTED. When
# the two are the same file, INPUT must be canonical: `convert --exact`
# takes it and says nothing. Otherwise INPUT uses spellings the document
# allows and the text form rewrites: `convert` reports REWRITTEN of LINES
# lines, and `convert --exact` refuses INPUT. Either way the trace checks ok.
function(round_trip name dtd input expected rewritten lines)
  set(trace "${WORK_DIR}/${name}.mtf")
  set(back "${WORK_DIR}/${name}.txt")
  if(input STREQUAL expected)
    run_in_source(0 ${MTF} convert --exact --dtd ${dtd} ${input} ${trace})
    expect_equal("stderr of convert --exact ${input}" "${err}" "")
  else()
    run_in_source(0 ${MTF} convert --dtd ${dtd} ${input} ${trace})
    if(NOT err MATCHES "^mtf: convert: ${input}: rewrote ${rewritten} of ${lines} lines in the format's canonical spelling")
      message(FATAL_ERROR "convert ${input}: expected a report of ${rewritten} of ${lines} lines rewritten, got\n${err}")
    endif()
    run_in_source(1 ${MTF} convert --exact --dtd ${dtd} ${input} "${trace}.exact")
    if(EXISTS "${trace}.exact")
      message(FATAL_ERROR "convert --exact ${input} failed but left its output")
    endif()
  endif()
  run_in_source(0 ${MTF} convert ${trace} ${back})
  expect_equal("stderr of convert ${trace}" "${err}" "")
  same_bytes("${input} to ${trace} and back to text" "${SOURCE_DIR}/${expected}" "${back}")
  run_in_source(0 ${MTF} check ${trace})
  if(NOT out MATCHES "^${trace}: ok: [0-9]+ records, [01] sections? with data, [0-9]+ bytes\n$")
    message(FATAL_ERROR "check ${trace}: expected ok, got\n${out}")
  endif()
endfunction()

# Each line of FILE on its own is refused by `convert` with its line and
# column (exit 1, no output), since the document does not allow it.
function(refused name dtd file)
  file(STRINGS "${SOURCE_DIR}/${file}" cases)
  set(i 0)
  foreach(line IN LISTS cases)
    math(EXPR i "${i} + 1")
    set(text "${WORK_DIR}/${name}-refused-${i}.txt")
    file(WRITE "${text}" "${line}\n")
    run_in_source(1 ${MTF} convert --dtd ${dtd} ${text} "${text}.mtf")
    if(NOT err MATCHES "^mtf: convert: ${text}: line 1, column [0-9]+: [^\n]+\n$")
      message(FATAL_ERROR "convert of '${line}' (${file}): expected an error at line 1, got\n${err}")
    endif()
    if(EXISTS "${text}.mtf")
      message(FATAL_ERROR "convert of '${line}' (${file}) failed but left its output")
    endif()
  endforeach()
endfunction()

# A text that is refused as a whole (multi-line cases), with its message.
function(refused_text name dtd content message)
  set(text "${WORK_DIR}/${name}.txt")
  file(WRITE "${text}" "${content}")
  run_in_source(1 ${MTF} convert --dtd ${dtd} ${text} "${text}.mtf")
  expect_equal("convert of ${name}" "${err}" "mtf: convert: ${text}: ${message}\n")
endfunction()

# INPUT converts (initial encodings, so record indices are the lines'), and
# `mtf check` reports exactly the rule violations listed in WANT (the
# trace's path stands first on each line) and exits 1.
function(violations name dtd input want)
  set(trace "${WORK_DIR}/${name}.mtf")
  run_in_source(0 ${MTF} convert --encoding initial --dtd ${dtd} ${input} ${trace})
  run_in_source(1 ${MTF} check ${trace})
  string(REPLACE "@T@" "${trace}" want "${want}")
  expect_equal("check ${trace}" "${out}" "${want}")
endfunction()

# ---- SPC (dtds/spc.dtd; the SPC trace file format specification 1.0.1)
round_trip(spc-canonical dtds/spc.dtd ${here}/spc/canonical.spc ${here}/spc/canonical.spc 0 0)
round_trip(spc-spellings dtds/spc.dtd ${here}/spc/spellings.spc ${here}/spc/spellings.expected.spc 4 4)
round_trip(spc-spellings-expected dtds/spc.dtd ${here}/spc/spellings.expected.spc ${here}/spc/spellings.expected.spc 0 0)
refused(spc dtds/spc.dtd ${here}/spc/refused.spc)
# 2.2.5: a timestamp below the one before; 2.2.1: units 0..n-1 all present.
violations(spc-rules dtds/spc.dtd ${here}/spc/rules.spc
"@T@: record 2 (spc), field 'timestamp' is 2.400000, below 2.500000 of record 1 (order: nondecreasing)
@T@: record type 'spc', field 'asu' takes values from 0 to 2, but not 1 (dense from 0)
@T@: 2 rule violations in 1 record
")

# ---- Laplace (dtds/laplace.dtd; the per-process merge format page)
round_trip(laplace-canonical dtds/laplace.dtd ${here}/laplace/canonical.laplace ${here}/laplace/canonical.laplace 0 0)
round_trip(laplace-spellings dtds/laplace.dtd ${here}/laplace/spellings.laplace ${here}/laplace/spellings.expected.laplace 3 3)
round_trip(laplace-spellings-expected dtds/laplace.dtd ${here}/laplace/spellings.expected.laplace ${here}/laplace/spellings.expected.laplace 0 0)
refused(laplace dtds/laplace.dtd ${here}/laplace/refused.laplace)
# A 4-bit length and a 20-bit virtual page.
violations(laplace-rules dtds/laplace.dtd ${here}/laplace/rules.laplace
"@T@: record 0 (userRead), field 'length' is 0x10, above the maximum 0xf
@T@: record 0 (userRead), field 'virtualPage' is 0x100000, above the maximum 0xfffff
@T@: 2 rule violations in 1 record
")

# ---- PTF (dtds/ptf.dtd; POSSE Trace Format 1.0, CU-CS-897-00)
round_trip(ptf-canonical dtds/ptf.dtd ${here}/ptf/canonical.ptf ${here}/ptf/canonical.ptf 0 0)
round_trip(ptf-empty dtds/ptf.dtd ${here}/ptf/empty.ptf ${here}/ptf/empty.ptf 0 0)
round_trip(ptf-spellings dtds/ptf.dtd ${here}/ptf/spellings.ptf ${here}/ptf/spellings.expected.ptf 8 8)
round_trip(ptf-spellings-expected dtds/ptf.dtd ${here}/ptf/spellings.expected.ptf ${here}/ptf/spellings.expected.ptf 0 0)
refused_text(ptf-no-begin dtds/ptf.dtd "co 41 42\nTrace end\n"
  "line 1, column 1: expected the begin line 'Trace begin'")
refused_text(ptf-no-end dtds/ptf.dtd "Trace begin\nco 41 42\n"
  "line 2, column 9: the text ends without the end line 'Trace end'")
refused_text(ptf-after-end dtds/ptf.dtd "Trace begin\nTrace end\nco 41 42\n"
  "line 3, column 1: text after the end line 'Trace end'")
refused_text(ptf-annotation dtds/ptf.dtd "Trace begin\nco 41 42 Create object 42\nTrace end\n"
  "line 2, column 9: unexpected text after the last field of record 'co': ' Create object 42'")
refused_text(ptf-short-name dtds/ptf.dtd "Trace begin\nfo 41 0 2 1 0 11 11 BinTree\nTrace end\n"
  "line 2, column 21: field 'className' of record 'fo' should have 11 bytes, but the line has only 7 left")
refused_text(ptf-few-params dtds/ptf.dtd "Trace begin\new 41 42 0\nTrace end\n"
  "line 2, column 11: the line ends before field 'toOid' of record 'ew'")
refused_text(ptf-negative-oid dtds/ptf.dtd "Trace begin\nco 41 -42\nTrace end\n"
  "line 2, column 7: field 'oid' of record 'co' is unsigned and cannot be negative")
refused_text(ptf-upper-case dtds/ptf.dtd "Trace begin\nCO 41 42\nTrace end\n"
  "line 2, column 1: unknown record 'CO'")
# ptf-native: section 4.1's binary form (codes and sizes as dtds/ptf.dtd decides them).
run_in_source(0 ${MTF} check --native --dtd dtds/ptf.dtd tests/fixtures/native/ptf-example.ptfb)
if(NOT out MATCHES "^tests/fixtures/native/ptf-example.ptfb: ok: ")
  message(FATAL_ERROR "check --native of the PTF binary example: ${out}")
endif()

# ---- CHARISMA (dtds/charisma.dtd; the project's generic C header). No text
# form: the files its tracers wrote, as tests/native/charisma_writer.c writes
# them from the header's structs, check ok in both layouts, and the header's
# named values are rules: an open mode or operation bit it does not name is
# reported.
# charisma-native:
foreach(form ipsc860 lp64)
  run_in_source(0 ${MTF} check --native --dtd dtds/charisma.dtd tests/fixtures/native/charisma-${form}.bin)
  if(NOT out MATCHES "^tests/fixtures/native/charisma-${form}.bin: ok: 17 records")
    message(FATAL_ERROR "check --native of charisma-${form}.bin: ${out}")
  endif()
endforeach()
# charisma-620, charisma-880: byte 620 of charisma-lp64.bin is appOpen's open_flags (0x0a), byte 880
# readWrite's operation_type (0x02).
foreach(patch "620;\\x4a;3 (appOpen), field 'openFlags' is 0x4a, whose bits 0x40"
              "880;\\x0a;5 (readWrite), field 'operationType' is 0xa, whose bits 0x8")
  list(GET patch 0 offset)
  list(GET patch 1 byte)
  list(GET patch 2 what)
  set(bin "${WORK_DIR}/charisma-${offset}.lp64")
  execute_process(COMMAND perl -0777 -pe "substr($_, ${offset}, 1) = \"${byte}\""
                  "${SOURCE_DIR}/tests/fixtures/native/charisma-lp64.bin"
                  OUTPUT_FILE "${bin}" RESULT_VARIABLE code)
  expect_equal("perl patching ${bin}" "${code}" "0")
  run_in_source(1 ${MTF} check --native --dtd dtds/charisma.dtd ${bin})
  expect_equal("check of ${bin}" "${out}"
    "${bin}: record ${what} are no flag it names\n${bin}: 1 rule violation in 1 record\n")
endforeach()

# ---- HATF 1.0 and the Meta-TF language (the ISMM 2000 paper)
# mtfc: DTDs written from the paper's text and Appendices A-C compile cleanly.
foreach(dtd hatf10-paper paper-language)
  run_in_source(0 ${MTFC} ${here}/hatf/${dtd}.dtd)
  expect_equal("mtfc ${dtd}.dtd" "${out}${err}" "")
endforeach()
# hatf-traces: HATF 1.0 written from the paper lays records out as dtds/hatf10.dtd does:
# it reads (same fingerprint) every checked-in HATF trace.
file(GLOB hatf_traces RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/tests/fixtures/traces/hatf10-*.mtf")
foreach(trace IN LISTS hatf_traces)
  run_in_source(0 ${MTF} check --dtd ${here}/hatf/hatf10-paper.dtd ${trace})
  if(NOT out MATCHES "^${trace}: ok: 14 records")
    message(FATAL_ERROR "check --dtd hatf10-paper.dtd ${trace}: ${out}")
  endif()
endforeach()
