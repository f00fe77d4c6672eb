# End-to-end checks of the mtf command line: exact output on a checked-in
# trace, exit statuses, one-line errors, --help.
# Run by CTest as: cmake -DMTF=... -DSOURCE_DIR=... -DWORK_DIR=... -P cli_test.cmake

set(trace tests/fixtures/traces/hatf10-big-endian-64.mtf)
set(golden "${SOURCE_DIR}/tests/mtf/golden")

include(${CMAKE_CURRENT_LIST_DIR}/../script_checks.cmake)

# Runs mtf from the source directory (so messages name traces as above).
function(run expected_code)
  run_in_source(${expected_code} ${MTF} ${ARGN})
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
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
golden(dump.txt dump --meta ${trace})
golden(dump.txt dump --meta --format=text ${trace})
golden(dump-no-meta.jsonl dump --format jsonl --no-meta ${trace})
golden(alloc.csv dump --format csv --record alloc ${trace})
golden(check.txt check ${trace})
golden(stats.txt stats ${trace})
golden(stats.json stats --json ${trace})
# A record type without a text form, in a DTD that has one (one.dtd; both.dtd,
# with the same layout, wrote the trace): stats shows its values.
file(WRITE "${WORK_DIR}/both.dtd" "text { separator = \" \"; }\nx.width = 4;\ny.width = 4;\na : (tag, x) { tag.value = 5; tag.mnemonic = \"a\"; }\nb : (tag, y) { tag.value = 6; tag.mnemonic = \"b\"; }\n")
file(WRITE "${WORK_DIR}/one.dtd" "text { separator = \" \"; }\nx.width = 4;\ny.width = 4;\na : (tag, x) { tag.value = 5; tag.mnemonic = \"a\"; }\nb : (tag, y) { tag.value = 6; }\n")
file(WRITE "${WORK_DIR}/both.txt" "a 1\nb 2\n")
run(0 convert -f --dtd "${WORK_DIR}/both.dtd" "${WORK_DIR}/both.txt" "${WORK_DIR}/both.mtf")
run(0 stats --dtd "${WORK_DIR}/one.dtd" "${WORK_DIR}/both.mtf")
if(NOT out MATCHES "\nb +y +unsigned +1 +2 +2 ")
  message(FATAL_ERROR "stats with one.dtd: no row for field y of b:\n${out}")
endif()
# The same records in the other byte order and class.
golden(dump.txt dump --meta tests/fixtures/traces/hatf10-little-endian-32.mtf)
# --dtd with the trace's own DTD reads it alike.
golden(dump.txt dump --meta --dtd dtds/hatf10.dtd ${trace})

# -o FILE, and -o DIR for CSV: a file per record type, with a header row.
run(0 dump --meta --format jsonl -o "${WORK_DIR}/all.jsonl" ${trace})
file(STRINGS "${WORK_DIR}/all.jsonl" lines)
list(LENGTH lines n)
expect_equal("lines of dump -o" "${n}" "14")
# --range and --limit: records by index (metadata counted), and at most N of those selected.
run(0 dump --meta --format jsonl --range 2:4 ${trace})
if(NOT out MATCHES "^{\"record\":\"alloc\",\"index\":2,[^\n]*\n{\"record\":\"metadata\",\"index\":3,[^\n]*\n$")
  message(FATAL_ERROR "dump --range 2:4 did not print records 2 and 3 alone:\n${out}")
endif()
run(0 dump --no-meta ${trace})
string(REGEX MATCH "^[^\n]*\n[^\n]*\n" first_two "${out}")
run(0 dump --no-meta --limit 2 ${trace})
expect_equal("dump --limit 2" "${out}" "${first_two}")
run(0 dump --range 3: --limit 0 ${trace})
expect_equal("dump --limit 0" "${out}" "")
# --fields: only the fields named, in each record's order, in every format.
run(0 dump --no-meta --fields address,size --limit 2 ${trace})
expect_equal("dump --fields" "${out}" "alloc size=24 address=65536\nalloc size=4096 address=131072\n")
run(0 dump --format csv --record alloc --record free --fields time,address --range :9 ${trace})
expect_equal("dump --fields as one table" "${out}" "index,record,address,time\n1,alloc,65536,0\n2,alloc,131072,0\n5,alloc,131088,0\n6,alloc,131056,0\n8,free,65536,0\n")
fails(2 "mtf: dump: --fields: no record type shown has a field 'size' (see 'mtf dump --help')" dump --record free --fields size ${trace})
# --where: records whose field compares so; several must all hold; values in the field's spelling.
run(0 dump --where "size>100" --fields size ${trace})
expect_equal("dump --where size>100" "${out}" "alloc size=4096\nalloc size=200\n")
run(0 dump --where address=0x10000 --fields address ${trace})
expect_equal("dump --where address=0x10000" "${out}" "alloc address=65536\nfree address=65536\n")
fails(2 "mtf: dump: --where takes FIELD OP VALUE (OP one of = != < <= > >=), not 'size' (see 'mtf dump --help')" dump --where size ${trace})
fails(2 "mtf: dump: --where: no record type shown has an integer or bytes field 'nope' (see 'mtf dump --help')" dump --where nope=1 ${trace})
fails(2 "mtf: dump: --range takes FIRST:END (record indices, END excluded), not '5' (see 'mtf dump --help')" dump --range 5 ${trace})
fails(2 "mtf: dump: --limit takes a record index or count (decimal digits), not '-1' (see 'mtf dump --help')" dump --limit -1 ${trace})
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
expect_equal("mtf check -" "${code}:${out}" "0:stdin: ok: 14 records, 1 section with data, 4692 bytes\n")

# ---- bad input: exit 1, one line
fails(1 "mtf: check: ${WORK_DIR}/missing.mtf: cannot open '${WORK_DIR}/missing.mtf': No such file or directory"
      check "${WORK_DIR}/missing.mtf")
# Errors about the file as a whole, or I/O failures, have no position in the trace.
fails(1 "mtf: info: dtds/hatf10.dtd: not a Meta-TF trace (the file does not start with \\177MTF)"
      info dtds/hatf10.dtd)
file(WRITE "${WORK_DIR}/empty.mtf" "")
fails(1 "mtf: check: ${WORK_DIR}/empty.mtf: the file is too short for a Meta-TF header" check "${WORK_DIR}/empty.mtf")
# A directory is refused by name, as a trace and as text.
fails(1 "mtf: stats: ${WORK_DIR}: is a directory, not a file" stats "${WORK_DIR}")
fails(1 "mtf: convert: ${WORK_DIR}: is a directory, not a file"
      convert --dtd dtds/spc.dtd "${WORK_DIR}" "${WORK_DIR}/x.mtf")
# Cut inside the records: the section index at the end is gone.
execute_process(COMMAND head -c 4624 "${SOURCE_DIR}/${trace}" OUTPUT_FILE "${WORK_DIR}/truncated.mtf")
fails(1 "mtf: check: ${WORK_DIR}/truncated.mtf: byte 40, record 0: the section index does not fit between the data and the end of the file"
      check "${WORK_DIR}/truncated.mtf")
fails(1 "mtf: dump: ${trace}: the DTD tests/fixtures/features.dtd lays out records differently from the trace, whose DTD is 'hatf10' (fingerprint 0x43236e3981bf7fba, the trace's 0x480e7ea3648f5479)"
      dump --dtd tests/fixtures/features.dtd ${trace})

# ---- convert: native text to Meta-TF and back
set(spc examples/traces/example.spc)
run(0 convert --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/example.mtf")
run(0 convert "${WORK_DIR}/example.mtf" "${WORK_DIR}/example.spc")
file(READ "${SOURCE_DIR}/${spc}" want)
file(READ "${WORK_DIR}/example.spc" got)
expect_equal("SPC text -> Meta-TF -> text" "${got}" "${want}")
# dump writes values as the DTD's text form does, in every format: SPC's opcode as W, its time stamps in fixed point.
run(0 dump --no-meta --limit 1 "${WORK_DIR}/example.mtf")
expect_equal("dump of SPC as text" "${out}"
  "spc asu=0 lba=20941264 size=8192 opcode=W timestamp=0.551706 optionalCount=1 optionalCount*=[{optional.optionalLength=8 optional.optionalText=\"Alpha/NT\"}]\n")
run(0 dump --format jsonl --no-meta --limit 1 "${WORK_DIR}/example.mtf")
expect_equal("dump of SPC as JSON Lines" "${out}"
  "{\"record\":\"spc\",\"index\":1,\"section\":0,\"fields\":{\"asu\":0,\"lba\":20941264,\"size\":8192,\"opcode\":\"W\",\"timestamp\":0.551706,\"optionalCount\":1,\"optionalCount*\":[{\"optional.optionalLength\":8,\"optional.optionalText\":\"Alpha/NT\"}]}}\n")
run(0 dump --format csv --record spc --range 2:3 "${WORK_DIR}/example.mtf")
expect_equal("dump of SPC as CSV" "${out}" "asu,lba,size,opcode,timestamp,optionalCount,optionalCount*\n0,20939840,8192,W,0.554041,0,[]\n")
run(0 dump --no-meta --where opcode=R --where "timestamp<2.4" --fields lba,timestamp "${WORK_DIR}/example.mtf")
expect_equal("dump --where on a chars field and a scaled one" "${out}" "spc lba=7695360 timestamp=2.346628\n")
fails(2 "mtf: dump: --where: '0.5600000001' is not a value of field 'timestamp' (see 'mtf dump --help')" dump --where "timestamp<0.5600000001" "${WORK_DIR}/example.mtf")
# --group: one CSV row per element of a repeated group, with its record's index.
run(0 dump --format csv --group optionalCount "${WORK_DIR}/example.mtf")
expect_equal("dump --group" "${out}" "index,record,element,optional.optionalLength,optional.optionalText
1,spc,0,8,Alpha/NT
4,spc,0,5,0x123
4,spc,1,4,5.99
4,spc,2,4,test
")
fails(2 "mtf: dump: --group: no record type shown has a repeated group 'size*' (see 'mtf dump --help')" dump --format csv --group size "${WORK_DIR}/example.mtf")
fails(2 "mtf: dump: --group takes --format csv, to standard output (see 'mtf dump --help')" dump --group optionalCount "${WORK_DIR}/example.mtf")
# Several traces in one run: each record names its trace; indices and --limit count within each.
run(0 dump --no-meta --limit 1 --fields asu,size "${WORK_DIR}/example.mtf" ${trace})
expect_equal("dump of two traces" "${out}" "${WORK_DIR}/example.mtf: spc asu=0 size=8192
${trace}: alloc size=24
")
run(0 dump --format jsonl --no-meta --limit 1 --fields size "${WORK_DIR}/example.mtf" ${trace})
expect_equal("dump of two traces as JSON Lines" "${out}" "{\"trace\":\"${WORK_DIR}/example.mtf\",\"record\":\"spc\",\"index\":1,\"section\":0,\"fields\":{\"size\":8192}}
{\"trace\":\"${trace}\",\"record\":\"alloc\",\"index\":1,\"section\":0,\"fields\":{\"size\":24}}
")
run(0 dump --format csv --no-meta --limit 1 --fields size,time "${WORK_DIR}/example.mtf" ${trace})
expect_equal("dump of two traces as one CSV table" "${out}" "trace,index,record,size,time
${WORK_DIR}/example.mtf,1,spc,8192,
${trace},1,alloc,24,0
")
fails(2 "mtf: dump: standard input ('-') can be read only once (see 'mtf dump --help')" dump - -)
fails(2 "mtf: dump: --fields takes field names separated by commas, not 'size,,time' (see 'mtf dump --help')" dump --fields size,,time ${trace})
fails(2 "mtf: dump: --fields: no record type shown has a field 'bogus' (see 'mtf dump --help')" dump --fields size,bogus "${WORK_DIR}/example.mtf" ${trace})
fails(2 "mtf: dump: no trace's DTD has a record type 'nosuch' (see 'mtf dump --help')" dump --record spc --record nosuch "${WORK_DIR}/example.mtf" ${trace})
fails(2 "mtf: dump: several traces go to one CSV table on standard output, not to files in -o ${WORK_DIR}/csv (see 'mtf dump --help')" dump --format csv -o "${WORK_DIR}/csv" ${trace} ${trace})
# A header that borrows a shipped DTD's name for another layout: a warning from info and check.
# (The DTD's name is its file's; a header edited in place would fail its checksum.)
file(MAKE_DIRECTORY "${WORK_DIR}/named")
configure_file("${SOURCE_DIR}/dtds/spc.dtd" "${WORK_DIR}/named/ptf.dtd" COPYONLY)
run(0 convert --dtd "${WORK_DIR}/named/ptf.dtd" ${spc} "${WORK_DIR}/relabelled.mtf")
run(0 check "${WORK_DIR}/relabelled.mtf")
expect_equal("check of an SPC trace relabelled 'ptf'" "${err}"
  "mtf: check: ${WORK_DIR}/relabelled.mtf: warning: the header names the DTD 'ptf', but the trace is laid out as the shipped spc.dtd, not ptf.dtd\n")
run(0 info "${WORK_DIR}/relabelled.mtf")
expect_equal("info of an SPC trace relabelled 'ptf'" "${err}"
  "mtf: info: ${WORK_DIR}/relabelled.mtf: warning: the header names the DTD 'ptf', but the trace is laid out as the shipped spc.dtd, not ptf.dtd\n")
file(READ "${SOURCE_DIR}/dtds/spc.dtd" spc_dtd)
string(REPLACE "tag.width = 1;" "tag.width = 2;" spc_dtd "${spc_dtd}")
file(WRITE "${WORK_DIR}/wide/spc.dtd" "${spc_dtd}")
run(0 convert --dtd "${WORK_DIR}/wide/spc.dtd" ${spc} "${WORK_DIR}/wide.mtf")
run(0 check "${WORK_DIR}/wide.mtf")
expect_equal("check of a trace of another 'spc'" "${err}"
  "mtf: check: ${WORK_DIR}/wide.mtf: warning: the header names the DTD 'spc', but the trace is not laid out as the shipped spc.dtd\n")
run(0 check "${WORK_DIR}/example.mtf")
expect_equal("check of a trace of the shipped spc.dtd" "${err}" "")
run(0 convert "${WORK_DIR}/example.mtf" -)
expect_equal("convert to stdout" "${out}" "${want}")
# Non-canonical input is normalized; a value too wide for its field is kept by widening it.
file(WRITE "${WORK_DIR}/loose.spc" "1,3435888,512,w, 1.6\r\n300,1099511627776,8589934592,R,2.5,x y,\n")
run(0 convert --encoding initial --dtd dtds/spc.dtd "${WORK_DIR}/loose.spc" "${WORK_DIR}/loose.mtf")
expect_equal("report of rewritten lines" "${err}" "mtf: convert: ${WORK_DIR}/loose.spc: rewrote 2 of 2 lines in the format's canonical spelling (--exact refuses that); the first: line 1, column 15: \"1,3435888,512,w, 1.6\\r\\n\" is written \"1,3435888,512,W,1.600000\\n\"\n")
run(0 convert "${WORK_DIR}/loose.mtf" -)
expect_equal("normalized SPC" "${out}" "1,3435888,512,W,1.600000\n300,1099511627776,8589934592,R,2.500000,x y,\n")
# --exact: a line spelled otherwise than it is written back is an error, and nothing is written.
fails(1 "mtf: convert: ${WORK_DIR}/loose.spc: line 1, column 15: the line is not spelled as it is written back: \"1,3435888,512,w, 1.6\\r\\n\" is written \"1,3435888,512,W,1.600000\\n\" (--exact)"
      convert --exact --dtd dtds/spc.dtd "${WORK_DIR}/loose.spc" "${WORK_DIR}/loose-exact.mtf")
if(EXISTS "${WORK_DIR}/loose-exact.mtf")
  message(FATAL_ERROR "convert --exact left its output")
endif()
run(0 convert --exact --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/exact.mtf")
expect_equal("convert --exact of canonical text" "${err}" "")
fails(2 "mtf: convert: --exact is about the spelling of text input; INPUT is a trace (see 'mtf convert --help')"
      convert --exact "${WORK_DIR}/exact.mtf" "${WORK_DIR}/exact.spc")
# The begin and end lines are compared too; a long line is shown around where it differs.
file(WRITE "${WORK_DIR}/framed.ptf" "Trace begin  \nTrace end\r\n")
run(0 convert --dtd dtds/ptf.dtd "${WORK_DIR}/framed.ptf" "${WORK_DIR}/framed.mtf")
expect_equal("respelled begin and end lines" "${err}" "mtf: convert: ${WORK_DIR}/framed.ptf: rewrote 2 of 2 lines in the format's canonical spelling (--exact refuses that); the first: line 1, column 12: \"Trace begin  \\n\" is written \"Trace begin\\n\"\n")
# Issue 40: tokens whose after texts end alike ("S", "RS") convert and come back byte for byte.
file(WRITE "${WORK_DIR}/suffix.dtd" "lx.width = 1; lx.text = omit; x.type = bytes; x.width = lx.value;\nly.width = 1; ly.text = omit; y.type = bytes; y.width = ly.value;\ntext { separator = \" \"; }\nr : (tag, lx, x, ly, y) { tag.value = 4; tag.mnemonic = \"r\"; x.after = \"S\"; y.after = \"RS\"; }\n")
file(WRITE "${WORK_DIR}/suffix.txt" "r ATS xRS\nr xRS yRS\nr S RS\n")
run(0 convert --exact --dtd "${WORK_DIR}/suffix.dtd" "${WORK_DIR}/suffix.txt" "${WORK_DIR}/suffix.mtf")
run(0 convert "${WORK_DIR}/suffix.mtf" -)
expect_equal("after texts that end alike" "${out}" "r ATS xRS\nr xRS yRS\nr S RS\n")
# A DTD whose text could read into a trace not written back is refused before a line is read.
file(WRITE "${WORK_DIR}/fixed-line.dtd" "s.type = bytes; s.width = 4; s.text = line;\ntext { separator = \",\"; }\nr : (tag, s) { tag.value = 4; tag.mnemonic = \"r\"; }\n")
file(WRITE "${WORK_DIR}/fixed-line.txt" "r,abcdef\n")
fails(1 "mtf: convert: the DTD ${WORK_DIR}/fixed-line.dtd has errors: ${WORK_DIR}/fixed-line.dtd:1:39: 'line' takes the rest of the line, whatever its length, and field 's' of record 'r' has a fixed width of 4 bytes; 'string' takes exactly that many"
      convert --dtd "${WORK_DIR}/fixed-line.dtd" "${WORK_DIR}/fixed-line.txt" "${WORK_DIR}/fixed-line.mtf")
# Columns padded with blanks (blkparse's default line): --exact reads them and they come back byte for byte,
# a value wider than its column included; --strict refuses a value its field's width cannot hold.
file(WRITE "${WORK_DIR}/blk.txt" "  8,0    3        1     0.000000000   697  G   W 223490 + 8 [kjournald]\n  8,16  12      300 12345.000001781 123456 UT  WS 223490 + 1024 [kworker/0:1]\n")
run(0 convert --exact --dtd tests/fixtures/blkparse.dtd "${WORK_DIR}/blk.txt" "${WORK_DIR}/blk.mtf")
run(0 convert "${WORK_DIR}/blk.mtf" -)
file(READ "${WORK_DIR}/blk.txt" blk_text)
expect_equal("blkparse lines" "${out}" "${blk_text}")
file(WRITE "${WORK_DIR}/blk-wide.txt" "  8,0   70000        1     0.000000000   697  G   W 223490 + 8 [kjournald]\n")
fails(1 "mtf: convert: ${WORK_DIR}/blk-wide.txt: line 1: value 70000 of field 'cpu' (none) does not fit in 2 bytes"
      convert --strict --dtd tests/fixtures/blkparse.dtd "${WORK_DIR}/blk-wide.txt" "${WORK_DIR}/blk-wide.mtf")
# Words an enum names (MSR Cambridge's Read and Write): stored as numbers, written back as the words.
file(WRITE "${WORK_DIR}/msr.csv" "128166372003061629,hm,1,Read,3649060864,4096,41395\n128166372002993263,hm,1,Write,3633869824,4096,40012\n")
run(0 convert --exact --dtd dtds/msr.dtd "${WORK_DIR}/msr.csv" "${WORK_DIR}/msr.mtf")
run(0 convert "${WORK_DIR}/msr.mtf" -)
file(READ "${WORK_DIR}/msr.csv" msr_text)
expect_equal("MSR Cambridge lines" "${out}" "${msr_text}")
run(0 dump --format csv "${WORK_DIR}/msr.mtf")
expect_equal("MSR Cambridge dump" "${out}" "index,record,timestamp,hostnameLength,hostname,disk,type,offset,size,responseTime\n0,request,128166372003061629,2,hm,1,Read,3649060864,4096,41395\n1,request,128166372002993263,2,hm,1,Write,3633869824,4096,40012\n")
# --where on a string compares its bytes.
file(WRITE "${WORK_DIR}/msr-hosts.csv" "1,hm,1,Read,0,512,9\n2,prxy,0,Write,512,512,9\n3,src1,1,Read,0,512,9\n")
run(0 convert --exact --dtd dtds/msr.dtd "${WORK_DIR}/msr-hosts.csv" "${WORK_DIR}/msr-hosts.mtf")
run(0 dump --format csv --fields timestamp,hostname --where hostname=prxy "${WORK_DIR}/msr-hosts.mtf")
expect_equal("--where on a string" "${out}" "index,record,timestamp,hostname\n5,request,2,prxy\n")
run(0 dump --format csv --fields timestamp --where hostname>=p --where type=Read "${WORK_DIR}/msr-hosts.mtf")
expect_equal("--where on a string, ordered" "${out}" "index,record,timestamp\n6,request,3\n")
# A pipe named by a path (bash's <(...)) is read once, not sniffed and reopened empty.
file(REMOVE "${WORK_DIR}/msr.fifo" "${WORK_DIR}/msr-fifo.mtf")
run_in_source(0 sh -c "mkfifo '${WORK_DIR}/msr.fifo' && { cat '${WORK_DIR}/msr-hosts.csv' > '${WORK_DIR}/msr.fifo' & } && '${MTF}' convert --dtd dtds/msr.dtd '${WORK_DIR}/msr.fifo' '${WORK_DIR}/msr-fifo.mtf'")
run(0 convert "${WORK_DIR}/msr-fifo.mtf" -)
file(READ "${WORK_DIR}/msr-hosts.csv" hosts_text)
expect_equal("MSR lines through a named pipe" "${out}" "${hosts_text}")
file(WRITE "${WORK_DIR}/msr-flush.csv" "128166372003061629,hm,1,Flush,0,0,41395\n")
fails(1 "mtf: convert: ${WORK_DIR}/msr-flush.csv: line 1, column 25: expected one of the names (Read, Write) for field 'type' of record 'request', not 'Flush'"
      convert --dtd dtds/msr.dtd "${WORK_DIR}/msr-flush.csv" "${WORK_DIR}/msr-flush.mtf")
string(REPEAT "a" 100 long)
file(WRITE "${WORK_DIR}/long-w.spc" "0,1,512,R,0.500000,${long}\n0,1,512,R,0.500000,${long}b\r\n")
string(SUBSTRING "${long}" 0 19 nineteen)
run(0 convert --dtd dtds/spc.dtd "${WORK_DIR}/long-w.spc" "${WORK_DIR}/long-w.mtf")
expect_equal("an excerpt of a long line" "${err}" "mtf: convert: ${WORK_DIR}/long-w.spc: rewrote 1 of 2 lines in the format's canonical spelling (--exact refuses that); the first: line 2, column 121: ...\"${nineteen}b\\r\\n\" is written ...\"${nineteen}b\\n\"\n")
run(0 dump --meta --format jsonl "${WORK_DIR}/loose.mtf")
string(REGEX MATCHALL "\"record\":\"metadata\"" widened "${out}")
list(LENGTH widened n)
expect_equal("metadata records that widen asu, lba and size" "${n}" "3")
# Rules the shipped DTDs state (docs/dtd-language.md, section 17): check reports each broken one.
file(WRITE "${WORK_DIR}/late.spc" "0,1,512,R,2.5\n0,2,512,R,2.5\n0,3,512,W,2.4\n0,4,512,W,2.3\n")
run(0 convert --dtd dtds/spc.dtd "${WORK_DIR}/late.spc" "${WORK_DIR}/late.mtf")
run(1 check "${WORK_DIR}/late.mtf")
expect_equal("check of decreasing SPC timestamps" "${out}"
"${WORK_DIR}/late.mtf: record 4 (spc), field 'timestamp' is 2.400000, below 2.500000 of record 3 (order: nondecreasing)
${WORK_DIR}/late.mtf: record 5 (spc), field 'timestamp' is 2.300000, below 2.400000 of record 4 (order: nondecreasing)
${WORK_DIR}/late.mtf: 2 rule violations in 2 records
")
run(1 check --max-violations 0 "${WORK_DIR}/late.mtf")
expect_equal("check --max-violations 0" "${out}" "${WORK_DIR}/late.mtf: 2 rule violations in 2 records (2 not shown; --max-violations shows more)\n")
fails(2 "mtf: check: --max-violations takes a count (decimal digits), not 'all' (see 'mtf check --help')" check --max-violations all "${WORK_DIR}/late.mtf")
file(WRITE "${WORK_DIR}/units.spc" "0,1,512,R,0.1\n3,2,512,R,0.2\n1,2,512,R,0.3\n")
run(0 convert --dtd dtds/spc.dtd "${WORK_DIR}/units.spc" "${WORK_DIR}/units.mtf")
run(1 check "${WORK_DIR}/units.mtf")
expect_equal("check of SPC units with a gap" "${out}"
"${WORK_DIR}/units.mtf: record type 'spc', field 'asu' takes values from 0 to 3, but not 2 (dense from 0)
${WORK_DIR}/units.mtf: 1 rule violation
")
file(WRITE "${WORK_DIR}/wide.laplace" "r 1029384756afbecd 10 fffff 0000000000012345\nw 1029384756afbece 4 123456 0000000000012345\n")
run(0 convert --dtd dtds/laplace.dtd "${WORK_DIR}/wide.laplace" "${WORK_DIR}/wide-page.mtf")
run(1 check "${WORK_DIR}/wide-page.mtf")
expect_equal("check of Laplace's 4-bit length and 20-bit page" "${out}"
"${WORK_DIR}/wide-page.mtf: record 1 (userRead), field 'length' is 0x10, above the maximum 0xf
${WORK_DIR}/wide-page.mtf: record 3 (userWrite), field 'virtualPage' is 0x123456, above the maximum 0xfffff
${WORK_DIR}/wide-page.mtf: 2 rule violations in 2 records
")
# --compress: zstd chunks that read back to the same text; levels outside 1-22 are refused.
run(0 convert --compress --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/packed.mtf")
run(0 convert "${WORK_DIR}/packed.mtf" -)
expect_equal("SPC text -> compressed Meta-TF -> text" "${out}" "${want}")
run(0 convert --compress=1 --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/packed1.mtf")
run(0 check "${WORK_DIR}/packed1.mtf")
fails(2 "mtf: convert: --compress takes a level from 1 to 22, not '23' (see 'mtf convert --help')" convert --compress=23 --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/packed2.mtf")
fails(2 "mtf: convert: --compress takes a level from 1 to 22, not 'x' (see 'mtf convert --help')" convert --compress=x --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/packed2.mtf")
# --chunk-size: 3000 SPC lines (over 12 KiB of records) in 4 KiB chunks read back whole.
set(many "")
foreach(i RANGE 1 3000)
  math(EXPR lba "${i} * 7919 * 104729 % 1000000007")
  string(APPEND many "0,${lba},4096,W,${i}.500000\n")
endforeach()
file(WRITE "${WORK_DIR}/many.spc" "${many}")
run(0 convert --compress --chunk-size=4K --dtd dtds/spc.dtd "${WORK_DIR}/many.spc" "${WORK_DIR}/many.mtf")
run(0 info "${WORK_DIR}/many.mtf")
if(NOT out MATCHES "global +([0-9]+) " OR CMAKE_MATCH_1 LESS 3)
  message(FATAL_ERROR "--chunk-size=4K wrote ${CMAKE_MATCH_1} chunks, not at least 3:\n${out}")
endif()
run(0 convert "${WORK_DIR}/many.mtf" -)
expect_equal("SPC text -> Meta-TF in 4 KiB chunks -> text" "${out}" "${many}")
# --split: the fields named go to sections of their own, which mtf info
# lists, and the text comes back whole, through convert and recode alike
# (recode at zstd's highest level).
run(0 convert --split spc.lba,spc.asu+spc.size --chunk-size=4K --dtd dtds/spc.dtd "${WORK_DIR}/many.spc" "${WORK_DIR}/split.mtf")
run(0 info "${WORK_DIR}/split.mtf")
if(NOT out MATCHES "\n +1 +split_1 +[1-9][0-9]* +[1-9]" OR NOT out MATCHES "\n +2 +split_2 +[1-9]")
  message(FATAL_ERROR "convert --split: no chunks in sections split_1 and split_2:\n${out}")
endif()
run(0 convert "${WORK_DIR}/split.mtf" -)
expect_equal("SPC text -> Meta-TF with split streams -> text" "${out}" "${many}")
run(0 recode --compress=22 --split spc.timestamp "${WORK_DIR}/split.mtf" "${WORK_DIR}/resplit.mtf")
run(0 convert "${WORK_DIR}/resplit.mtf" -)
expect_equal("SPC with split streams -> recoded with others -> text" "${out}" "${many}")
fails(2 "mtf: recode: split streams: record 'spc' has no field 'block' (see 'mtf recode --help')" recode --split spc.block "${WORK_DIR}/split.mtf" "${WORK_DIR}/split2.mtf")
fails(2 "mtf: convert: --split takes record.field names separated by commas, not 'spc.lba,' (see 'mtf convert --help')" convert --split spc.lba, --dtd dtds/spc.dtd "${WORK_DIR}/many.spc" "${WORK_DIR}/split2.mtf")
fails(2 "mtf: recode: --chunk-size takes a size from 4K to 64M (bytes, or K or M for KiB or MiB), not '65M' (see 'mtf recode --help')" recode --chunk-size=65M "${trace}" "${WORK_DIR}/chunks.mtf")
fails(2 "mtf: convert: --chunk-size takes a size from 4K to 64M (bytes, or K or M for KiB or MiB), not '4095' (see 'mtf convert --help')" convert --chunk-size 4095 --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/chunks.mtf")
# recode: the same records (metadata aside) in compressed chunks, and text that comes back whole.
run(0 recode --compress "${trace}" "${WORK_DIR}/recoded.mtf")
run(0 dump --no-meta "${trace}")
set(records "${out}")
run(0 dump --no-meta "${WORK_DIR}/recoded.mtf")
expect_equal("records of a recoded trace" "${out}" "${records}")
run(0 recode --encoding initial "${trace}" "${WORK_DIR}/initial.mtf")
run(0 dump --no-meta "${WORK_DIR}/initial.mtf")
expect_equal("records of a trace recoded in its initial encodings" "${out}" "${records}")
# auto (the default) costs no more than initial, and less on SPC (narrow sizes, a constant ASU).
file(SIZE "${WORK_DIR}/initial.mtf" initial_size)
run(0 recode "${trace}" "${WORK_DIR}/auto.mtf")
run(0 dump --no-meta "${WORK_DIR}/auto.mtf")
expect_equal("records of a trace recoded in encodings chosen from its data" "${out}" "${records}")
file(SIZE "${WORK_DIR}/auto.mtf" auto_size)
if(auto_size GREATER initial_size)
  message(FATAL_ERROR "recode --encoding auto wrote ${auto_size} bytes, initial ${initial_size}")
endif()
run(0 recode --encoding initial "${WORK_DIR}/example.mtf" "${WORK_DIR}/example-initial.mtf")
file(SIZE "${WORK_DIR}/example-initial.mtf" initial_size)
file(SIZE "${WORK_DIR}/example.mtf" auto_size)
if(NOT auto_size LESS initial_size)
  message(FATAL_ERROR "convert (auto) wrote ${auto_size} bytes, recode --encoding initial ${initial_size}")
endif()
fails(2 "mtf: recode: --encoding takes auto, initial or keep, not 'best' (see 'mtf recode --help')" recode --encoding best "${trace}" "${WORK_DIR}/best.mtf")
# --no-live: auto without references to live values; only auto takes it.
run(0 recode --no-live "${trace}" "${WORK_DIR}/no-live.mtf")
run(0 dump --no-meta "${WORK_DIR}/no-live.mtf")
expect_equal("records of a trace recoded without live references" "${out}" "${records}")
run(0 dump --meta "${WORK_DIR}/no-live.mtf")
if(out MATCHES "property=(live|feed|predict)")
  message(FATAL_ERROR "recode --no-live wrote live, feed or predict metadata:\n${out}")
endif()
# --references pins how fields refer to live values (auto tries live and
# predict); which fields refer at all, on larger traces, test_auto.cpp says.
run(0 recode --references live "${trace}" "${WORK_DIR}/refs-live.mtf")
run(0 dump --meta "${WORK_DIR}/refs-live.mtf")
if(out MATCHES "property=predict")
  message(FATAL_ERROR "recode --references live wrote predict metadata:\n${out}")
endif()
run(0 recode --references predict "${trace}" "${WORK_DIR}/refs-predict.mtf")
run(0 dump --meta "${WORK_DIR}/refs-predict.mtf")
if(out MATCHES "property=live")
  message(FATAL_ERROR "recode --references predict wrote live metadata:\n${out}")
endif()
run(0 dump --no-meta "${WORK_DIR}/refs-predict.mtf")
expect_equal("records of a trace recoded with predict references" "${out}" "${records}")
fails(2 "mtf: recode: --references takes auto, predict, live or none, not 'some' (see 'mtf recode --help')" recode --references some "${trace}" "${WORK_DIR}/refs.mtf")
fails(2 "mtf: recode: --references applies to --encoding auto (see 'mtf recode --help')" recode --encoding initial --references live "${trace}" "${WORK_DIR}/refs.mtf")
fails(2 "mtf: recode: --no-live applies to --encoding auto (see 'mtf recode --help')" recode --encoding initial --no-live "${trace}" "${WORK_DIR}/no-live2.mtf")
fails(2 "mtf: convert: --no-live applies to --encoding auto (see 'mtf convert --help')" convert --strict --no-live --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/no-live3.mtf")
fails(2 "mtf: convert: --encoding takes auto or initial, not 'keep' (see 'mtf convert --help')" convert --encoding keep --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/keep.mtf")
fails(2 "mtf: convert: --strict keeps the initial encodings: it cannot be used with --encoding auto (see 'mtf convert --help')" convert --strict --encoding auto --dtd dtds/spc.dtd ${spc} "${WORK_DIR}/keep.mtf")
run(0 recode --encoding keep --compress "${trace}" "${WORK_DIR}/kept-encodings.mtf")
run(0 dump "${trace}")
set(records "${out}")
run(0 dump "${WORK_DIR}/kept-encodings.mtf")
expect_equal("records and metadata of a trace recoded with its encodings" "${out}" "${records}")
run(0 recode --compress=3 "${WORK_DIR}/example.mtf" "${WORK_DIR}/example.zst.mtf")
run(0 convert "${WORK_DIR}/example.zst.mtf" -)
expect_equal("SPC text -> Meta-TF -> recoded -> text" "${out}" "${want}")
fails(1 "mtf: recode: ${WORK_DIR}/recoded.mtf: exists; use -f (--force) to replace it" recode "${trace}" "${WORK_DIR}/recoded.mtf")
# --strict refuses the value instead, naming its line, and leaves no output.
fails(1 "mtf: convert: ${WORK_DIR}/loose.spc: line 2: value 300 of field 'asu' (none) does not fit in 1 bytes"
      convert --strict --dtd dtds/spc.dtd "${WORK_DIR}/loose.spc" "${WORK_DIR}/strict.mtf")
if(EXISTS "${WORK_DIR}/strict.mtf" OR EXISTS "${WORK_DIR}/strict.mtf.partial")
  message(FATAL_ERROR "a refused conversion left a file behind")
endif()
# Bad input: the line and column, and no output file left behind.
file(WRITE "${WORK_DIR}/bad.spc" "0,20941264,8192,W,0.551706,Alpha/NT\n2,30862016,4096,W,2 448003\n")
fails(1 "mtf: convert: ${WORK_DIR}/bad.spc: line 2, column 20: field 'timestamp' of record 'spc' needs a fraction: '.' and up to 9 digits"
      convert --dtd dtds/spc.dtd "${WORK_DIR}/bad.spc" "${WORK_DIR}/bad.mtf")
if(EXISTS "${WORK_DIR}/bad.mtf" OR EXISTS "${WORK_DIR}/bad.mtf.partial")
  message(FATAL_ERROR "a failed conversion left a file behind")
endif()
# --skip-bad: counts on stderr; exit 1 and no output when no line was kept.
run(0 convert --skip-bad --dtd dtds/spc.dtd "${WORK_DIR}/bad.spc" "${WORK_DIR}/skipped.mtf")
expect_equal("convert --skip-bad" "${err}"
  "mtf: convert: ${WORK_DIR}/bad.spc: skipped 1 of 2 lines, kept 1 records; the first: line 2, column 20: field 'timestamp' of record 'spc' needs a fraction: '.' and up to 9 digits\n")
run(0 convert "${WORK_DIR}/skipped.mtf" -)
expect_equal("the record --skip-bad kept" "${out}" "0,20941264,8192,W,0.551706,Alpha/NT\n")
file(WRITE "${WORK_DIR}/all-bad.spc" "0,1,2,W,1\n0,1,2,X,0.5\n")
fails(1 "mtf: convert: ${WORK_DIR}/all-bad.spc: skipped 2 of 2 lines, kept 0 records; the first: line 1, column 10: field 'timestamp' of record 'spc' needs a fraction: '.' and up to 9 digits"
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
file(WRITE "${WORK_DIR}/long.spc" "0,1,2,W,0.5${commas}\n0,1,2,W,0.500000\n")
fails(1 "mtf: convert: ${WORK_DIR}/long.spc: line 1, column 1048577: the line is longer than 1048576 bytes, the limit for one line"
      convert --dtd dtds/spc.dtd "${WORK_DIR}/long.spc" "${WORK_DIR}/long.mtf")
run(0 convert --skip-bad --dtd dtds/spc.dtd "${WORK_DIR}/long.spc" "${WORK_DIR}/long.mtf")
expect_equal("convert --skip-bad of a long line" "${err}"
  "mtf: convert: ${WORK_DIR}/long.spc: skipped 1 of 2 lines, kept 1 records; the first: line 1, column 1048577: the line is longer than 1048576 bytes, the limit for one line\n")
fails(1 "mtf: convert: ${trace}: the DTD 'hatf10' describes no text form" convert ${trace} -)
fails(1 "mtf: convert: dtds/hatf10.dtd: the DTD 'hatf10' describes no text form"
      convert --dtd dtds/hatf10.dtd ${spc} "${WORK_DIR}/x.mtf")
# A failed write names the output, not the trace read.
execute_process(COMMAND ${MTF} convert "${WORK_DIR}/example.mtf" - OUTPUT_FILE /dev/full
                RESULT_VARIABLE code ERROR_VARIABLE err)
expect_equal("mtf convert TRACE - >/dev/full" "${code}:${err}" "1:mtf: convert: stdout: cannot write: No space left on device\n")
fails(2 "mtf: convert: converting text needs the format's DTD: --dtd FILE (see 'mtf convert --help')"
      convert ${spc} "${WORK_DIR}/x.mtf")
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
fails(2 "mtf: dump: the DTD 'hatf10' has no record type 'nope' (see 'mtf dump --help')" dump --record nope ${trace})
fails(2 "mtf: stats: option '--dtd' needs a value (see 'mtf stats --help')" stats ${trace} --dtd)
# A wrong number of arguments says which are missing, or the first extra one, in the command's terms.
fails(2 "mtf: info: no TRACE given (mtf info TRACE) (see 'mtf info --help')" info)
fails(2 "mtf: check: unexpected argument 'extra' after TRACE (mtf check TRACE) (see 'mtf check --help')"
      check ${trace} extra)
fails(2 "mtf: convert: no INPUT or OUTPUT given (mtf convert INPUT OUTPUT) (see 'mtf convert --help')" convert)
fails(2 "mtf: convert: no OUTPUT given (mtf convert INPUT OUTPUT) (see 'mtf convert --help')" convert io.mtf)
fails(2 "mtf: convert: unexpected argument 'c' after OUTPUT (mtf convert INPUT OUTPUT) (see 'mtf convert --help')"
      convert a b c)
# An option given twice is a mistake, except --record.
fails(2 "mtf: dump: --format given twice (see 'mtf dump --help')" dump --format text --format=jsonl ${trace})
fails(2 "mtf: dump: -o given twice (see 'mtf dump --help')" dump -o a -o b ${trace})
fails(2 "mtf: dump: --no-meta given twice (see 'mtf dump --help')" dump --no-meta --no-meta ${trace})
fails(2 "mtf: info: --dtd given twice (see 'mtf info --help')" info --dtd dtds/hatf10.dtd --dtd dtds/hatf10.dtd ${trace})
fails(2 "mtf: convert: --class given twice (see 'mtf convert --help')" convert --class 32 --class 64 a b)

# ---- several --record: the records of every type named, in trace order
file(STRINGS "${golden}/dump.txt" all_lines)
set(want "")
foreach(line IN LISTS all_lines)
  if(line MATCHES "^(comment|free) ")
    string(APPEND want "${line}\n")
  endif()
endforeach()
run(0 dump --record free --record comment ${trace})
expect_equal("dump --record free --record comment" "${out}" "${want}")
fails(2 "mtf: dump: the DTD 'hatf10' has no record type 'nope' (see 'mtf dump --help')"
      dump --record alloc --record nope ${trace})
# CSV: a file per type named; standard output takes one type.
run(0 dump --format csv --record alloc --record free -o "${WORK_DIR}/two-csv" ${trace})
file(GLOB csv_files RELATIVE "${WORK_DIR}/two-csv" "${WORK_DIR}/two-csv/*")
list(SORT csv_files)
expect_equal("files of dump --format csv --record alloc --record free" "${csv_files}" "alloc.csv;free.csv")
file(READ "${WORK_DIR}/two-csv/alloc.csv" alloc_csv)
file(READ "${golden}/alloc.csv" want)
expect_equal("two-csv/alloc.csv" "${alloc_csv}" "${want}")
# CSV on standard output of several record types: one table in trace order, with index and record columns.
run(0 dump --format csv --record alloc --record free ${trace})
string(REGEX MATCH "^[^\n]*" header "${out}")
expect_equal("header of the one table" "${header}"
  "index,record,size,address,thread,heap,time,attributes.attributesLength,attributes.attributesData")
string(REGEX MATCHALL "\n[0-9]+,[a-z]+," rows "${out}")
expect_equal("rows of the one table" "${rows}" "\n1,alloc,;\n2,alloc,;\n5,alloc,;\n6,alloc,;\n8,free,")
string(REGEX MATCH "\n8,free,[^\n]*" free_row "${out}")
expect_equal("a free's row, its cells under its own fields' columns" "${free_row}" "\n8,free,,65536,7,0,0,0,")
run(0 dump --meta --format csv --limit 4 ${trace})
string(REGEX MATCH "^[^\n]*" header "${out}")
expect_equal("header of the one table with metadata"
  "${header}" "index,record,length,data,number,metadata.record,field,property,value,size,address,thread,heap,time,attributes.attributesLength,attributes.attributesData,oldAddress,newAddress")

# ---- help and version: on stdout, nothing on stderr, exit 0
function(same_output what)
  run(0 ${ARGN})
  expect_equal("stderr of mtf ${ARGN}" "${err}" "")
  expect_equal("mtf ${ARGN}" "${out}" "${${what}}")
endfunction()

run(0 --help)
set(usage "${out}")
foreach(command info dump check stats convert recode recover help)
  string(FIND "${usage}" "\n  ${command} " at)
  if(at EQUAL -1)
    message(FATAL_ERROR "mtf --help does not list '${command}'")
  endif()
endforeach()
same_output(usage -h)
same_output(usage help)
same_output(usage help help)
foreach(command info dump check stats convert recode)
  run(0 ${command} --help)
  set(command_help "${out}")
  string(FIND "${command_help}" "Usage: mtf ${command} [OPTIONS] " at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "mtf ${command} --help:\n${command_help}")
  endif()
  same_output(command_help ${command} -h)
  same_output(command_help help ${command})
endforeach()
# Asking for help wins over other mistakes; after "--", -h is a file name.
run(0 dump --help)
set(dump_help "${out}")
same_output(dump_help dump --bogus -h)
fails(1 "mtf: dump: -h: cannot open '-h': No such file or directory" dump -- -h)
fails(2 "mtf: unknown command 'frob' (see 'mtf --help')" help frob)
fails(2 "mtf: unexpected argument 'x' after COMMAND (mtf help COMMAND)" help dump x)

run(0 --version)
set(version "${out}")
if(NOT version MATCHES "^mtf [0-9]+\\.[0-9]+\\.[0-9]+\n$")
  message(FATAL_ERROR "mtf --version: ${version}")
endif()
same_output(version -V)

# ---- Output files: never replaced in silence, never anything but a regular file.
set(out_dir "${WORK_DIR}/output")
file(REMOVE_RECURSE "${out_dir}")
file(MAKE_DIRECTORY "${out_dir}")
set(example "${SOURCE_DIR}/examples/traces/example.spc")
file(READ "${example}" example_text)
# Traces through pipes: text -> trace on stdout -> text, byte for byte.
execute_process(COMMAND cat "${example}"
                COMMAND ${MTF} convert --dtd "${SOURCE_DIR}/dtds/spc.dtd" - -
                COMMAND ${MTF} convert - -
                OUTPUT_VARIABLE piped RESULTS_VARIABLE codes)
expect_equal("cat x.spc | mtf convert --dtd spc.dtd - - | mtf convert - -" "${codes};${piped}" "0;0;0;${example_text}")
# An existing file is kept without -f, replaced with it.
file(WRITE "${out_dir}/kept.mtf" "precious")
fails(1 "mtf: convert: ${out_dir}/kept.mtf: exists; use -f (--force) to replace it"
      convert --dtd dtds/spc.dtd ${example} "${out_dir}/kept.mtf")
file(READ "${out_dir}/kept.mtf" kept)
expect_equal("a file kept without -f" "${kept}" "precious")
run(0 convert -f --dtd dtds/spc.dtd ${example} "${out_dir}/kept.mtf")
run(0 check "${out_dir}/kept.mtf")
# Input = output is refused before anything is written.
file(COPY "${example}" DESTINATION "${out_dir}")
fails(1 "mtf: convert: ${out_dir}/example.spc: is also an input; write the output to another file"
      convert -f --dtd dtds/spc.dtd "${out_dir}/example.spc" "${out_dir}/example.spc")
file(READ "${out_dir}/example.spc" same)
expect_equal("input = output left alone" "${same}" "${example_text}")
# A symbolic link is written through; the link stays a link.
file(CREATE_LINK "target.mtf" "${out_dir}/link.mtf" SYMBOLIC)
run(0 convert --dtd dtds/spc.dtd ${example} "${out_dir}/link.mtf")
if(NOT IS_SYMLINK "${out_dir}/link.mtf" OR NOT EXISTS "${out_dir}/target.mtf")
  message(FATAL_ERROR "writing through a symbolic link replaced the link")
endif()
run(0 check "${out_dir}/link.mtf")
# A FIFO is written in place and stays a FIFO. The reader gives up after a minute,
# so a convert that fails before opening the FIFO fails the test instead of hanging it.
execute_process(COMMAND mkfifo "${out_dir}/fifo")
execute_process(COMMAND ${MTF} convert --dtd "${SOURCE_DIR}/dtds/spc.dtd" "${example}" "${out_dir}/fifo"
                COMMAND timeout 60 cat "${out_dir}/fifo" OUTPUT_FILE "${out_dir}/from-fifo.mtf" RESULTS_VARIABLE codes)
execute_process(COMMAND test -p "${out_dir}/fifo" RESULT_VARIABLE still_fifo)
expect_equal("a trace written into a FIFO" "${codes};${still_fifo}" "0;0;0")
run(0 check "${out_dir}/from-fifo.mtf")
# A character device (made here when the test may) stays a device.
execute_process(COMMAND mknod "${out_dir}/null" c 1 3 RESULT_VARIABLE code ERROR_QUIET)
if(code EQUAL 0)
  run(0 convert --dtd dtds/spc.dtd ${example} "${out_dir}/null")
  execute_process(COMMAND test -c "${out_dir}/null" RESULT_VARIABLE still_device)
  expect_equal("a character device stays one" "${still_device}" "0")
endif()
# A directory is not an output.
fails(1 "mtf: convert: ${out_dir}: is a directory, not a file" convert --dtd dtds/spc.dtd ${example} "${out_dir}")
# A stray temporary of a killed run is no obstacle.
file(WRITE "${out_dir}/stray.mtf.AbCdEf.partial" "left by SIGKILL")
run(0 convert --dtd dtds/spc.dtd ${example} "${out_dir}/stray.mtf")
# Two converts racing to one new path: one writes it whole, the other fails; the result checks.
execute_process(COMMAND ${MTF} convert --dtd "${SOURCE_DIR}/dtds/spc.dtd" "${example}" "${out_dir}/race.mtf"
                COMMAND ${MTF} convert --dtd "${SOURCE_DIR}/dtds/spc.dtd" "${example}" "${out_dir}/race.mtf"
                RESULTS_VARIABLE codes ERROR_VARIABLE err)
if(NOT codes MATCHES "^(0;1|1;0)$")
  message(FATAL_ERROR "two converts to one path: exits ${codes}, expected one success and one refusal\n${err}")
endif()
run(0 check "${out_dir}/race.mtf")
file(GLOB leftovers "${out_dir}/race.mtf.*")
expect_equal("temporary files left by the race" "${leftovers}" "")
# A trace cut short is refused; recover saves its whole segments.
string(REPEAT "0,20941264,8192,W,0.551706\n" 100000 many)
file(WRITE "${out_dir}/many.spc" "${many}")
run(0 convert --encoding initial --dtd dtds/spc.dtd "${out_dir}/many.spc" "${out_dir}/many.mtf")
execute_process(COMMAND head -c 1500000 "${out_dir}/many.mtf" OUTPUT_FILE "${out_dir}/cut.mtf")
run(1 check "${out_dir}/cut.mtf")
if(NOT err MATCHES "the trace has no end frame: its writer did not finish it")
  message(FATAL_ERROR "a cut trace: ${err}")
endif()
run(0 recover "${out_dir}/cut.mtf" "${out_dir}/saved.mtf")
if(NOT err MATCHES "^mtf: recover: .*cut.mtf: saved [0-9]+ records in 1 segment to .*saved.mtf; lost everything after byte [0-9]+, including a cut segment of [0-9]+ records")
  message(FATAL_ERROR "mtf recover reported: ${err}")
endif()
run(0 check "${out_dir}/saved.mtf")
fails(2 "mtf: recover: the recovered trace is read back once written, so OUTPUT must be a regular file (see 'mtf recover --help')"
      recover "${out_dir}/cut.mtf" "${out_dir}/fifo")

# ---- dump shows a trace's own records; --meta adds the predefined ones; --limit counts those shown
set(first_two_spc "spc asu=0 lba=20941264 size=8192 opcode=W timestamp=0.551706 optionalCount=1 optionalCount*=[{optional.optionalLength=8 optional.optionalText=\"Alpha/NT\"}]
spc asu=0 lba=20939840 size=8192 opcode=W timestamp=0.554041 optionalCount=0 optionalCount*=[]
")
run(0 dump --limit 2 "${WORK_DIR}/example.mtf")
expect_equal("dump --limit 2 of a converted SPC trace" "${out}" "${first_two_spc}")
run(0 dump --no-meta --limit 2 "${WORK_DIR}/example.mtf")
expect_equal("dump --no-meta, the default" "${out}" "${first_two_spc}")
run(0 dump --meta --limit 2 "${WORK_DIR}/example.mtf")
expect_equal("dump --meta --limit 2" "${out}" "metadata record=spc field=size property=width value=[2]
spc asu=0 lba=20941264 size=8192 opcode=W timestamp=0.551706 optionalCount=1 optionalCount*=[{optional.optionalLength=8 optional.optionalText=\"Alpha/NT\"}]
")
run(0 dump --format jsonl --limit 1 --fields size "${WORK_DIR}/example.mtf")
expect_equal("dump --format jsonl: indices count every record" "${out}" "{\"record\":\"spc\",\"index\":1,\"section\":0,\"fields\":{\"size\":8192}}\n")
fails(2 "mtf: dump: --meta and --no-meta say the opposite (see 'mtf dump --help')" dump --meta --no-meta "${WORK_DIR}/example.mtf")

# ---- stats of compressed chunks: the byte columns say what they count, and records get stored bytes
run(0 stats "${WORK_DIR}/many.mtf")
string(REGEX MATCHALL "(record|section) +(count|field|name) [^\n]*\n" headers "${out}")
expect_equal("stats headers of a compressed trace" "${headers}"
  "record    count  uncompressed  uncompressed/record  stored/record\n;record  field                    type      values       min          max  distinct  uncompressed\n;section  name    records  stored  uncompressed  stored/record\n")
if(NOT out MATCHES "\nspc +3000 +6000 +2\\.00 +0\\.([0-9]+)\n")
  message(FATAL_ERROR "stats of a compressed trace: no row 'spc 3000 6000 2.00 0.NN':\n${out}")
endif()
run(0 stats --json "${WORK_DIR}/many.mtf")
if(NOT out MATCHES "\"uncompressedBytes\": 8254" OR NOT out MATCHES "\"storedBytes\": [0-9]+")
  message(FATAL_ERROR "stats --json of a compressed trace: no uncompressedBytes or storedBytes:\n${out}")
endif()
run(0 stats "${WORK_DIR}/example.mtf")
if(NOT out MATCHES "^record +count +bytes +bytes/record\n" OR out MATCHES "stored|uncompressed")
  message(FATAL_ERROR "stats of an uncompressed trace names stored or uncompressed bytes:\n${out}")
endif()

# ---- blank lines that end a text are kept, and written back
file(WRITE "${WORK_DIR}/tail.spc" "0,1,512,R,0.500000\n0,2,512,W,0.600000\n\n\n\n")
run(0 convert --exact --dtd dtds/spc.dtd "${WORK_DIR}/tail.spc" "${WORK_DIR}/tail.mtf")
run(0 convert "${WORK_DIR}/tail.mtf" -)
expect_equal("text ending in blank lines, back byte for byte" "${out}" "0,1,512,R,0.500000\n0,2,512,W,0.600000\n\n\n\n")
run(0 dump --meta --record comment "${WORK_DIR}/tail.mtf")
expect_equal("the blank lines as a comment" "${out}" "comment length=3 data=\"\\n\\n\\n\"\n")
# More than a comment holds (255 bytes in SPC): several comments, one text.
string(REPEAT "\n" 600 blanks)
file(WRITE "${WORK_DIR}/tail600.spc" "0,1,512,R,0.500000\n${blanks}")
run(0 convert --exact --dtd dtds/spc.dtd "${WORK_DIR}/tail600.spc" "${WORK_DIR}/tail600.mtf")
run(0 convert "${WORK_DIR}/tail600.mtf" "${WORK_DIR}/tail600-back.spc")
same_bytes("600 blank lines, back" "${WORK_DIR}/tail600-back.spc" "${WORK_DIR}/tail600.spc")
# \r\n blank lines are respelled "\n", and reported as every line is; --exact refuses them at their line.
file(WRITE "${WORK_DIR}/tail-crlf.spc" "0,1,512,R,0.500000\n\r\n\r\n")
run(0 convert --dtd dtds/spc.dtd "${WORK_DIR}/tail-crlf.spc" "${WORK_DIR}/tail-crlf.mtf")
expect_equal("respelled blank lines" "${err}" "mtf: convert: ${WORK_DIR}/tail-crlf.spc: rewrote 2 of 3 lines in the format's canonical spelling (--exact refuses that); the first: line 2, column 1: \"\\r\\n\" is written \"\\n\"\n")
run(0 convert "${WORK_DIR}/tail-crlf.mtf" -)
expect_equal("blank lines written back as \\n" "${out}" "0,1,512,R,0.500000\n\n\n")
fails(1 "mtf: convert: ${WORK_DIR}/tail-crlf.spc: line 2, column 1: the line is not spelled as it is written back: \"\\r\\n\" is written \"\\n\" (--exact)"
      convert --exact --dtd dtds/spc.dtd "${WORK_DIR}/tail-crlf.spc" "${WORK_DIR}/tail-crlf2.mtf")
# A blank line before a record is still an error at its line; --skip-bad skips it.
file(WRITE "${WORK_DIR}/middle.spc" "0,1,512,R,0.500000\n\n\n0,2,512,W,0.600000\n\n")
fails(1 "mtf: convert: ${WORK_DIR}/middle.spc: line 2, column 1: empty line"
      convert --dtd dtds/spc.dtd "${WORK_DIR}/middle.spc" "${WORK_DIR}/middle.mtf")
run(0 convert --skip-bad --dtd dtds/spc.dtd "${WORK_DIR}/middle.spc" "${WORK_DIR}/middle.mtf")
expect_equal("convert --skip-bad of blank lines in the middle" "${err}"
  "mtf: convert: ${WORK_DIR}/middle.spc: skipped 2 of 5 lines, kept 2 records; the first: line 2, column 1: empty line\n")
run(0 convert "${WORK_DIR}/middle.mtf" -)
expect_equal("records around skipped blank lines, and the blank line at the end" "${out}" "0,1,512,R,0.500000\n0,2,512,W,0.600000\n\n")
# After PTF's end line: blank lines are kept, anything else is an error at its line.
file(WRITE "${WORK_DIR}/tail.ptf" "Trace begin\nco 41 42\nTrace end\n\n\n")
run(0 convert --exact --dtd dtds/ptf.dtd "${WORK_DIR}/tail.ptf" "${WORK_DIR}/tail-ptf.mtf")
run(0 convert "${WORK_DIR}/tail-ptf.mtf" -)
expect_equal("PTF with blank lines after its end line" "${out}" "Trace begin\nco 41 42\nTrace end\n\n\n")
file(WRITE "${WORK_DIR}/after.ptf" "Trace begin\nTrace end\n\nco 41 42\n")
fails(1 "mtf: convert: ${WORK_DIR}/after.ptf: line 4, column 1: text after the end line 'Trace end'"
      convert --dtd dtds/ptf.dtd "${WORK_DIR}/after.ptf" "${WORK_DIR}/after.mtf")
# A native file has no place for them: left out, with a warning.
run(0 convert --native "${WORK_DIR}/tail-ptf.mtf" "${WORK_DIR}/tail.ptfb")
expect_equal("blank lines to a native file" "${err}"
  "mtf: convert: ${WORK_DIR}/tail-ptf.mtf: warning: left out 2 blank line(s) that ended the text, which the native form cannot hold\n")

# ---- native errors name the byte and the record, the first record at byte 0 too
execute_process(COMMAND printf "\\377\\001" OUTPUT_FILE "${WORK_DIR}/code255.bin")
foreach(command convert dump check stats)
  set(args ${command} --native --form msb --dtd tests/native/bitfields.dtd "${WORK_DIR}/code255.bin")
  if(command STREQUAL "convert")
    list(APPEND args "${WORK_DIR}/code255.mtf")
  endif()
  fails(1 "mtf: ${command}: ${WORK_DIR}/code255.bin: byte 0, record 0: no record has the type code 255 (bytes ff)" ${args})
endforeach()

# ---- /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are the descriptors they name
set(example_mtf "${WORK_DIR}/example.mtf")
# Appended to with >>: the earlier content stays, and the trace follows it.
function(shell expected_code script)
  execute_process(COMMAND bash -c "${script}" WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  expect_equal("bash -c '${script}': exit status (stderr: ${err})" "${code}" "${expected_code}")
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()
file(WRITE "${out_dir}/log.txt" "earlier\n")
shell(0 "'${MTF}' convert -f --dtd dtds/spc.dtd ${spc} /dev/stdout >> '${out_dir}/log.txt' && echo after >> '${out_dir}/log.txt'")
shell(0 "head -c 8 '${out_dir}/log.txt' && tail -c +9 '${out_dir}/log.txt' | head -c -6 | '${MTF}' convert - - && tail -c 6 '${out_dir}/log.txt'")
expect_equal("a trace appended to a log through /dev/stdout" "${out}" "earlier\n${example_text}after\n")
# Text to /proc/self/fd/N and /dev/fd/N, appended; /dev/stderr to a file.
file(WRITE "${out_dir}/fd.txt" "earlier\n")
shell(0 "'${MTF}' convert '${example_mtf}' /proc/self/fd/3 3>> '${out_dir}/fd.txt' && '${MTF}' convert '${example_mtf}' /dev/fd/4 4>> '${out_dir}/fd.txt'")
file(READ "${out_dir}/fd.txt" got)
expect_equal("text through /proc/self/fd/3 and /dev/fd/4" "${got}" "earlier\n${example_text}${example_text}")
shell(0 "'${MTF}' convert '${example_mtf}' /dev/stderr 2> '${out_dir}/stderr.txt'")
file(READ "${out_dir}/stderr.txt" got)
expect_equal("text through /dev/stderr" "${got}" "${example_text}")
# A pipe is a stream, as '-' is.
shell(0 "'${MTF}' convert --dtd dtds/spc.dtd ${spc} /dev/stdout | '${MTF}' convert - /dev/stdout | cat")
expect_equal("a trace through /dev/stdout into a pipe" "${out}" "${example_text}")
# A descriptor that is not open, or only for reading, and one behind an input.
fails(1 "mtf: convert: /proc/self/fd/9: descriptor 9 is not open" convert "${example_mtf}" /proc/self/fd/9)
shell(1 "'${MTF}' convert '${example_mtf}' /dev/fd/5 5< '${out_dir}/log.txt'")
expect_equal("a descriptor open for reading" "${err}" "mtf: convert: /dev/fd/5: descriptor 5 is not open for writing\n")
file(COPY "${example}" DESTINATION "${out_dir}/fd-input")
shell(1 "'${MTF}' convert -f --dtd dtds/spc.dtd '${out_dir}/fd-input/example.spc' /dev/stdout >> '${out_dir}/fd-input/example.spc'")
expect_equal("an input behind /dev/stdout" "${err}" "mtf: convert: /dev/stdout: is also an input; write the output to another file\n")
file(READ "${out_dir}/fd-input/example.spc" same)
expect_equal("the input behind /dev/stdout left alone" "${same}" "${example_text}")
# recover reads its output back, by name: a descriptor's name is refused even with a file behind it.
shell(2 "'${MTF}' recover '${out_dir}/cut.mtf' /dev/stdout >> '${out_dir}/log.txt'")
expect_equal("recover to /dev/stdout" "${err}" "mtf: recover: the recovered trace is read back once written, so OUTPUT must be a regular file (see 'mtf recover --help')\n")

# ---- container version 4: every byte checksummed (docs/trace-format.md, section 1.3)
# Flips bit 0 of the byte at `offset` of `file` in place.
function(flip_bit file offset)
  execute_process(COMMAND perl -e "open(F, '+<', \$ARGV[0]) or die; seek(F, \$ARGV[1], 0); read(F, \$b, 1); seek(F, \$ARGV[1], 0); print F chr(ord(\$b) ^ 1)"
                          "${file}" "${offset}" RESULT_VARIABLE code)
  expect_equal("flipping byte ${offset} of ${file}" "${code}" "0")
endfunction()
# 100,000 records in 5 segments; a bit flipped in the last segment's chunk, 100 bytes before its
# end frame (36 bytes and 16 per segment), is found by check, which names the segment.
run(0 convert --encoding initial --chunk-size 400000 --dtd dtds/spc.dtd "${out_dir}/many.spc" "${out_dir}/sum.mtf")
run(0 info "${out_dir}/sum.mtf")
if(NOT out MATCHES "container    version 4, 5 segments \\(each decodes alone and is checksummed\\)\n")
  message(FATAL_ERROR "mtf info of a version-4 trace:\n${out}")
endif()
file(SIZE "${out_dir}/sum.mtf" size)
math(EXPR at "${size} - (36 + 5 * 16) - 100")
flip_bit("${out_dir}/sum.mtf" ${at})
run(1 check "${out_dir}/sum.mtf")
if(NOT err MATCHES "^mtf: check: [^\n]*sum.mtf: byte ([0-9]+), section 0, record ([0-9]+): segment 4 at byte [0-9]+: its chunk of section 0 does not match its checksum\n$")
  message(FATAL_ERROR "check of a damaged chunk: ${err}")
endif()
set(first_damaged "${CMAKE_MATCH_2}")
# recover keeps the four segments before it: the records before the one check names.
run(0 recover "${out_dir}/sum.mtf" "${out_dir}/sum-saved.mtf")
if(NOT err MATCHES "^mtf: recover: [^\n]*sum.mtf: saved ${first_damaged} records in 4 segments to [^\n]*sum-saved.mtf; stopped before the damaged segment 4 at byte [0-9]+: its chunk of section 0 does not match its checksum\n$")
  message(FATAL_ERROR "recover of a damaged chunk: ${err}")
endif()
run(0 check "${out_dir}/sum-saved.mtf")
if(NOT out MATCHES "^[^\n]*sum-saved.mtf: ok: ${first_damaged} records, 1 section with data, [0-9]+ bytes\n$")
  message(FATAL_ERROR "check of the saved segments: ${out}")
endif()
# A complete trace whose fingerprint is damaged: recover names its input and gives the reason
# check gives (version 3: the embedded DTD no longer matches it; version 4: the header's checksum).
foreach(version 3 4)
  set(damaged "${out_dir}/fingerprint-v${version}.mtf")
  run(0 convert --container-version ${version} --dtd dtds/spc.dtd ${example} "${damaged}")
  flip_bit("${damaged}" 8)
  run(1 check "${damaged}")
  string(REPLACE "mtf: check: " "mtf: recover: " expected "${err}")
  run(1 recover "${damaged}" "${out_dir}/fingerprint-saved.mtf")
  expect_equal("recover of a damaged fingerprint, version ${version}" "${err}" "${expected}")
  if(EXISTS "${out_dir}/fingerprint-saved.mtf")
    message(FATAL_ERROR "recover left a copy of a trace it refused")
  endif()
endforeach()
expect_equal("a damaged fingerprint, version 4" "${err}" "mtf: recover: ${damaged}: byte 24, record 0: the header and the embedded DTD do not match their checksum\n")
# With -f, a recovery that is refused leaves the file it would have replaced as it was.
file(WRITE "${out_dir}/kept.mtf" "earlier\n")
run(1 recover -f "${damaged}" "${out_dir}/kept.mtf")
file(READ "${out_dir}/kept.mtf" kept)
expect_equal("recover -f of a trace it refuses" "${kept}" "earlier\n")
# A frame field the reader checks before the frame's checksum is damage too: the high bit of
# segment 2's chunk count. recover keeps the two segments before it.
run(0 convert --encoding initial --chunk-size 400000 --dtd dtds/spc.dtd "${out_dir}/many.spc" "${out_dir}/count.mtf")
execute_process(COMMAND perl -e [=[
  open(F, '<', $ARGV[0]) or die; binmode F; local $/; my $d = <F>;
  my $at = 16 + 8 + 4 + ord(substr($d, 6, 1)) + unpack('Q<', substr($d, 16, 8));
  for (1 .. 2) {
    my $n = unpack('v', substr($d, $at + 2, 2));
    my $size = unpack('Q<', substr($d, $at + 16, 8));
    $size += unpack('Q<', substr($d, $at + 24 + 24 * $_ + 8, 8)) for 0 .. $n - 1;
    $at += 24 + 24 * $n + $size;
  }
  print $at;]=] "${out_dir}/count.mtf" OUTPUT_VARIABLE segment2 RESULT_VARIABLE code)
expect_equal("finding segment 2" "${code}" "0")
math(EXPR count_high "${segment2} + 3")
execute_process(COMMAND perl -e "open(F, '+<', \$ARGV[0]) or die; seek(F, \$ARGV[1], 0); read(F, \$b, 1); seek(F, \$ARGV[1], 0); print F chr(ord(\$b) ^ 128)"
                        "${out_dir}/count.mtf" "${count_high}" RESULT_VARIABLE code)
expect_equal("flipping the chunk count's high bit" "${code}" "0")
run(0 recover "${out_dir}/count.mtf" "${out_dir}/count-saved.mtf")
if(NOT err MATCHES "^mtf: recover: [^\n]*count.mtf: saved [0-9]+ records in 2 segments to [^\n]*count-saved.mtf; stopped before the damaged segment 2 at byte ${segment2}: a segment of 32769 chunks\n$")
  message(FATAL_ERROR "recover of a damaged chunk count: ${err}")
endif()
run(0 check "${out_dir}/count-saved.mtf")
# A DTD text that no reader takes is refused before anything is written, naming the readers' limit.
file(READ "${SOURCE_DIR}/dtds/spc.dtd" spc_dtd)
string(REPEAT "x" 16777216 filler)
file(WRITE "${out_dir}/huge.dtd" "${spc_dtd}// ${filler}\n")
file(SIZE "${out_dir}/huge.dtd" huge)
fails(1 "mtf: convert: ${out_dir}/huge.mtf: the DTD text is ${huge} bytes long, more than the 16777216 (16 MiB) a reader takes"
      convert --dtd "${out_dir}/huge.dtd" ${example} "${out_dir}/huge.mtf")
file(GLOB left "${out_dir}/huge.mtf*")
expect_equal("files left by a refused DTD" "${left}" "")
