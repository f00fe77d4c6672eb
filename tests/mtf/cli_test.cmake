# End-to-end checks of the mtf command line: exact output on a checked-in
# trace, exit statuses, one-line errors, --help.
# Run by CTest as: cmake -DMTF=... -DSOURCE_DIR=... -DWORK_DIR=... -P cli_test.cmake

set(trace tests/fixtures/traces/hatf10-big-endian-64.mtf)
set(golden "${SOURCE_DIR}/tests/mtf/golden")

# Runs mtf from the source directory (so messages name traces as above).
function(run expected_code)
  execute_process(COMMAND ${MTF} ${ARGN} WORKING_DIRECTORY "${SOURCE_DIR}"
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code STREQUAL expected_code)
    message(FATAL_ERROR "mtf ${ARGN}: exit ${code}, expected ${expected_code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect_equal what got want)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${what}: expected\n${want}\ngot\n${got}")
  endif()
endfunction()

# Output on stdout equal to a golden file, and nothing on stderr.
function(golden file)
  run(0 ${ARGN})
  file(READ "${golden}/${file}" want)
  expect_equal("mtf ${ARGN}" "${out}" "${want}")
  expect_equal("stderr of mtf ${ARGN}" "${err}" "")
endfunction()

# A failure: exit status and the exact one line on stderr.
function(fails code line)
  run(${code} ${ARGN})
  expect_equal("mtf ${ARGN}" "${err}" "${line}\n")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# ---- every command on a good trace
golden(info.txt info ${trace})
golden(dump.txt dump ${trace})
golden(dump.txt dump --format=text ${trace})
golden(dump-no-meta.jsonl dump --format jsonl --no-meta ${trace})
golden(alloc.csv dump --format csv --record alloc ${trace})
golden(check.txt check ${trace})
golden(stats.txt stats ${trace})
golden(stats.json stats --json ${trace})
# The same records in the other byte order and class.
golden(dump.txt dump tests/fixtures/traces/hatf10-little-endian-32.mtf)
# --dtd with the trace's own DTD reads it alike.
golden(dump.txt dump --dtd dtds/hatf10.dtd ${trace})

# -o FILE, and -o DIR for CSV: a file per record type, with a header row.
run(0 dump --format jsonl -o "${WORK_DIR}/all.jsonl" ${trace})
file(STRINGS "${WORK_DIR}/all.jsonl" lines)
list(LENGTH lines n)
expect_equal("lines of dump -o" "${n}" "14")
run(0 dump --format csv --no-meta -o "${WORK_DIR}/csv" ${trace})
file(READ "${WORK_DIR}/csv/alloc.csv" alloc_csv)
file(READ "${golden}/alloc.csv" want)
expect_equal("csv/alloc.csv" "${alloc_csv}" "${want}")
file(STRINGS "${WORK_DIR}/csv/createHeap.csv" heap_lines)
expect_equal("csv/createHeap.csv" "${heap_lines}" "heap,thread,time,attributes.attributesLength,attributes.attributesData")
if(EXISTS "${WORK_DIR}/csv/metadata.csv")
  message(FATAL_ERROR "--no-meta wrote metadata.csv")
endif()

# '-' reads standard input.
execute_process(COMMAND ${MTF} check - INPUT_FILE "${SOURCE_DIR}/${trace}" RESULT_VARIABLE code OUTPUT_VARIABLE out)
expect_equal("mtf check -" "${code}:${out}" "0:stdin: ok: 14 records, 1 section with data, 4518 bytes\n")

# ---- bad input: exit 1, one line
fails(1 "mtf: check: ${WORK_DIR}/missing.mtf: cannot open '${WORK_DIR}/missing.mtf': No such file or directory"
      check "${WORK_DIR}/missing.mtf")
fails(1 "mtf: info: dtds/hatf10.dtd: byte 0, record 0: not a Meta-TF trace (the file does not start with \\177MTF)"
      info dtds/hatf10.dtd)
# Cut inside the records: the section index at the end is gone.
execute_process(COMMAND head -c 4450 "${SOURCE_DIR}/${trace}" OUTPUT_FILE "${WORK_DIR}/truncated.mtf")
fails(1 "mtf: check: ${WORK_DIR}/truncated.mtf: byte 40, record 0: the section index does not fit between the data and the end of the file"
      check "${WORK_DIR}/truncated.mtf")
fails(1 "mtf: dump: ${trace}: the DTD tests/fixtures/features.dtd lays out records differently from the trace (fingerprint 0x8b10ac77bbfc8b29, the trace's 0xc78ed682bcdd5f99)"
      dump --dtd tests/fixtures/features.dtd ${trace})

# ---- convert: native text to Meta-TF and back
set(spc examples/traces/example.spc)
run(0 convert --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/example.mtf")
run(0 convert "${WORK_DIR}/example.mtf" "${WORK_DIR}/example.spc")
file(READ "${SOURCE_DIR}/${spc}" want)
file(READ "${WORK_DIR}/example.spc" got)
expect_equal("SPC text -> Meta-TF -> text" "${got}" "${want}")
run(0 convert "${WORK_DIR}/example.mtf" -)
expect_equal("convert to stdout" "${out}" "${want}")
# Non-canonical input is normalized; a value too wide for its field is kept by widening it.
file(WRITE "${WORK_DIR}/loose.spc" "1,3435888,512,w, 1.6\r\n300,1099511627776,8589934592,R,2.5,x y,\n")
run(0 convert --dtd dtds/spc.dtd "${WORK_DIR}/loose.spc" "${WORK_DIR}/loose.mtf")
run(0 convert "${WORK_DIR}/loose.mtf" -)
expect_equal("normalized SPC" "${out}" "1,3435888,512,W,1.600000\n300,1099511627776,8589934592,R,2.500000,x y,\n")
run(0 dump --format jsonl "${WORK_DIR}/loose.mtf")
string(REGEX MATCHALL "\"record\":\"metadata\"" widened "${out}")
list(LENGTH widened n)
expect_equal("metadata records that widen asu, lba and size" "${n}" "3")
# Bad input: the line and column, and no output file left behind.
file(WRITE "${WORK_DIR}/bad.spc" "0,20941264,8192,W,0.551706,Alpha/NT\n2,30862016,4096,W,2 448003\n")
fails(1 "mtf: convert: ${WORK_DIR}/bad.spc: line 2, column 20: field 'timestamp' of record 'spc' needs a fraction: '.' and up to 6 digits"
      convert --dtd dtds/spc.dtd "${WORK_DIR}/bad.spc" "${WORK_DIR}/bad.mtf")
if(EXISTS "${WORK_DIR}/bad.mtf" OR EXISTS "${WORK_DIR}/bad.mtf.partial")
  message(FATAL_ERROR "a failed conversion left a file behind")
endif()
# --skip-bad: counts on stderr; exit 1 and no output when no line was kept.
run(0 convert --skip-bad --dtd dtds/spc.dtd "${WORK_DIR}/bad.spc" "${WORK_DIR}/skipped.mtf")
expect_equal("convert --skip-bad" "${err}"
  "mtf: convert: ${WORK_DIR}/bad.spc: skipped 1 of 2 lines, kept 1 records; the first: line 2, column 20: field 'timestamp' of record 'spc' needs a fraction: '.' and up to 6 digits\n")
run(0 convert "${WORK_DIR}/skipped.mtf" -)
expect_equal("the record --skip-bad kept" "${out}" "0,20941264,8192,W,0.551706,Alpha/NT\n")
file(WRITE "${WORK_DIR}/all-bad.spc" "0,1,2,W,1\n0,1,2,X,0.5\n")
fails(1 "mtf: convert: ${WORK_DIR}/all-bad.spc: skipped 2 of 2 lines, kept 0 records; the first: line 1, column 10: field 'timestamp' of record 'spc' needs a fraction: '.' and up to 6 digits"
      convert --skip-bad --dtd dtds/spc.dtd "${WORK_DIR}/all-bad.spc" "${WORK_DIR}/all-bad.mtf")
file(GLOB left "${WORK_DIR}/all-bad.mtf*")
expect_equal("files left by a conversion that kept nothing" "${left}" "")
# The begin and end lines count as lines, not as records.
file(WRITE "${WORK_DIR}/bad.ptf" "Trace begin\nco 41\nTrace end\n")
fails(1 "mtf: convert: ${WORK_DIR}/bad.ptf: skipped 1 of 3 lines, kept 0 records; the first: line 2, column 6: the line ends before field 'oid' of record 'co'"
      convert --skip-bad --dtd dtds/ptf.dtd "${WORK_DIR}/bad.ptf" "${WORK_DIR}/bad-ptf.mtf")
# A missing end line is reported where the text ends.
file(WRITE "${WORK_DIR}/unended.ptf" "Trace begin\nco 41 42\n")
fails(1 "mtf: convert: ${WORK_DIR}/unended.ptf: line 2, column 9: the text ends without the end line 'Trace end'"
      convert --dtd dtds/ptf.dtd "${WORK_DIR}/unended.ptf" "${WORK_DIR}/unended.mtf")
# A line longer than 1 MiB: an error where the limit is passed; --skip-bad drops the line.
string(REPEAT "," 1048576 commas)
file(WRITE "${WORK_DIR}/long.spc" "0,1,2,W,0.5${commas}\n0,1,2,W,0.5\n")
fails(1 "mtf: convert: ${WORK_DIR}/long.spc: line 1, column 1048577: the line is longer than 1048576 bytes, the limit for one line"
      convert --dtd dtds/spc.dtd "${WORK_DIR}/long.spc" "${WORK_DIR}/long.mtf")
run(0 convert --skip-bad --dtd dtds/spc.dtd "${WORK_DIR}/long.spc" "${WORK_DIR}/long.mtf")
expect_equal("convert --skip-bad of a long line" "${err}"
  "mtf: convert: ${WORK_DIR}/long.spc: skipped 1 of 2 lines, kept 1 records; the first: line 1, column 1048577: the line is longer than 1048576 bytes, the limit for one line\n")
fails(1 "mtf: convert: the DTD 'hatf10' describes no text form" convert ${trace} -)
fails(2 "mtf: convert: converting text needs the format's DTD: --dtd FILE (see 'mtf convert --help')"
      convert ${spc} "${WORK_DIR}/x.mtf")
fails(2 "mtf: convert: a Meta-TF trace is written to a file, not to standard output (see 'mtf convert --help')"
      convert --dtd dtds/spc.dtd ${spc} -)
fails(2 "mtf: convert: --class takes 32 or 64, not '16' (see 'mtf convert --help')"
      convert --class 16 --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/x.mtf")
# The other class and byte order read back the same.
run(0 convert --class 32 --byte-order big --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/big32.mtf")
run(0 convert "${WORK_DIR}/big32.mtf" -)
expect_equal("32-bit big-endian SPC trace" "${out}" "${want}")

# ---- command-line mistakes: exit 2, one line
fails(2 "mtf: no command given (see 'mtf --help')")
fails(2 "mtf: unknown command 'frob' (see 'mtf --help')" frob)
fails(2 "mtf: dump: unknown option '--bogus' (see 'mtf dump --help')" dump --bogus ${trace})
fails(2 "mtf: dump: unknown format 'xml' (text, jsonl or csv) (see 'mtf dump --help')" dump --format xml ${trace})
fails(2 "mtf: dump: csv on standard output needs --record NAME; give -o DIR for a file per record type (see 'mtf dump --help')"
      dump --format csv ${trace})
fails(2 "mtf: dump: the DTD 'hatf10' has no record type 'nope' (see 'mtf dump --help')" dump --record nope ${trace})
fails(2 "mtf: info: no trace file given (see 'mtf info --help')" info)
fails(2 "mtf: check: unexpected argument 'extra' (see 'mtf check --help')" check ${trace} extra)
fails(2 "mtf: stats: option '--dtd' needs a value (see 'mtf stats --help')" stats ${trace} --dtd)

# ---- --help: the tool and every command, on stdout, exit 0
run(0 --help)
foreach(command info dump check stats convert)
  string(FIND "${out}" "  ${command} " at)
  if(at EQUAL -1)
    message(FATAL_ERROR "mtf --help does not list '${command}'")
  endif()
endforeach()
foreach(command info dump check stats convert)
  run(0 ${command} --help)
  string(FIND "${out}" "Usage: mtf ${command} [OPTIONS] " at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "mtf ${command} --help:\n${out}")
  endif()
endforeach()
run(0 --version)
