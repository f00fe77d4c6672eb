# Every mtf command that reads a trace refuses the repeat bomb (issue 9): an
# SPC trace whose 1-byte records each stand for a huge repeated group of
# zero-byte elements. The trace-wide work budget (ReaderLimits) stops it at
# once, with exit status 1 and the budget's message, and no output is left.
# Run by CTest as: cmake -DMTF=... -DMAKE_TRACES=... -DWORK_DIR=... -P repeat_bomb_test.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(make_bomb path)
  execute_process(COMMAND ${MAKE_TRACES} spc-bomb "${path}" ${ARGN} RESULT_VARIABLE code ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "make_test_traces spc-bomb ${path} ${ARGN}: exit ${code}: ${err}")
  endif()
endfunction()

# `mtf ARGS...` on `bomb` fails at `record` with the budget's message, in no time.
function(refused bomb record)
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${MTF} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(TIMESTAMP end "%s")
  list(GET ARGN 0 command)
  set(want "^mtf: ${command}: ${bomb}: byte [0-9]+, section 0, record ${record}: repeated groups expand to more than [0-9]+ elements, the limit for the [0-9]+ bytes of records read \\(see ReaderLimits\\)\n$")
  if(NOT code EQUAL 1 OR NOT err MATCHES "${want}")
    message(FATAL_ERROR "mtf ${ARGN}: exit ${code}, expected 1 and the budget's message\nstderr: ${err}")
  endif()
  math(EXPR seconds "${end} - ${start}")
  if(seconds GREATER 10)
    message(FATAL_ERROR "mtf ${ARGN} took ${seconds} s to refuse the bomb")
  endif()
endfunction()

# The full size: 2.2 million records (2.2 MB) with a repeat count of 16777215,
# refused at the first SPC record (records 0-6 are the metadata).
set(big "${WORK_DIR}/bomb.mtf")
make_bomb("${big}")
# 10,000 records with a count of 40,000: each record alone passes the check of
# its own count, and the third goes over the budget of the whole trace.
set(small "${WORK_DIR}/small-bomb.mtf")
make_bomb("${small}" 10000 40000)

foreach(case "${big};7" "${small};9")
  list(GET case 0 bomb)
  list(GET case 1 record)
  foreach(command info check dump stats)
    refused("${bomb}" ${record} ${command} "${bomb}")
  endforeach()
  refused("${bomb}" ${record} dump --format jsonl "${bomb}")
  refused("${bomb}" ${record} convert "${bomb}" "${WORK_DIR}/out.spc")
  refused("${bomb}" ${record} recover "${bomb}" "${WORK_DIR}/out.mtf")
  foreach(out out.spc out.mtf)
    if(EXISTS "${WORK_DIR}/${out}")
      message(FATAL_ERROR "a refused command left ${out}")
    endif()
  endforeach()
endforeach()
