# Runs a libFuzzer binary for a bounded time on a fresh copy of a seed corpus.
#   cmake -DFUZZER=<binary> -DSEEDS=<dir> -DWORK=<dir> -P fuzz_run.cmake -- <libFuzzer options>...
# WORK is emptied and gets corpus/ (the copy, grown by the run) and
# artifacts/ (reproducers of any crash, leak or timeout).
foreach(var FUZZER SEEDS WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "fuzz_run.cmake: -D${var}=... is missing")
  endif()
endforeach()

set(options)
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_dashes)
    list(APPEND options "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
file(GLOB seeds "${SEEDS}/*")
if(NOT seeds)
  message(FATAL_ERROR "no seeds in ${SEEDS}")
endif()
file(COPY ${seeds} DESTINATION "${WORK}/corpus")

execute_process(
  COMMAND "${FUZZER}" ${options} "-artifact_prefix=${WORK}/artifacts/" "${WORK}/corpus"
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  file(GLOB artifacts "${WORK}/artifacts/*")
  message(FATAL_ERROR "${FUZZER} exited with ${status}; reproducers: ${artifacts}")
endif()
