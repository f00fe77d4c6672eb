# A real capture: tcpdump writes the loopback traffic of a few pings to
# 127.0.0.1, which converts to Meta-TF and back byte for byte. Skipped
# (CTest's SKIP_REGULAR_EXPRESSION "SKIP:") without tcpdump or ping, or
# where capturing is not permitted.
# Run by CTest as: cmake -DMTF=... -DSOURCE_DIR=... -DWORK_DIR=... -P pcap_tcpdump_test.cmake

include(${CMAKE_CURRENT_LIST_DIR}/../script_checks.cmake)

find_program(TCPDUMP tcpdump PATHS /usr/sbin /sbin)
find_program(PING ping PATHS /usr/bin /bin)
if(NOT TCPDUMP OR NOT PING)
  message("SKIP: needs tcpdump and ping")
  return()
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(capture "${WORK_DIR}/lo.pcap")

# tcpdump drops root for its own user before it opens the file; as root, stay root to write here.
execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
set(as_root "")
if(uid STREQUAL "0")
  set(as_root "-Z root")
endif()
execute_process(
  COMMAND sh -c "timeout 20 '${TCPDUMP}' ${as_root} -i lo -c 6 -w '${capture}' icmp & sleep 1; '${PING}' -c 3 -i 0.2 127.0.0.1 >/dev/null; wait $!"
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code STREQUAL "0" OR NOT EXISTS "${capture}")
  message("SKIP: cannot capture on lo (exit ${code}): ${err}")
  return()
endif()

run_in_source(0 ${MTF} convert --native --dtd dtds/pcap.dtd "${capture}" "${WORK_DIR}/lo.mtf")
run_in_source(0 ${MTF} dump --no-meta --record packet --fields incl_len "${WORK_DIR}/lo.mtf")
string(REGEX MATCHALL "packet incl_len=" packets "${out}")
list(LENGTH packets n)
expect_equal("the packets captured" "${n}" "6")
# Written back in the form the magic picked, which the trace remembers.
run_in_source(0 ${MTF} convert --native "${WORK_DIR}/lo.mtf" "${WORK_DIR}/lo.back")
same_bytes("tcpdump's capture -> Meta-TF -> pcap" "${WORK_DIR}/lo.back" "${capture}")
