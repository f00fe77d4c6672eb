# make_text FORMAT RECORDS -> text; mtf convert -> trace; mtf convert -> text;
# the two texts must be identical. Prints both sizes and bytes per record.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(text "${WORK_DIR}/trace.txt")
set(trace "${WORK_DIR}/trace.mtf")
set(back "${WORK_DIR}/back.txt")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${ARGN}\nfailed (${status}): ${err}")
  endif()
endfunction()

run("${MAKE_TEXT}" ${FORMAT} ${RECORDS} "${text}")
run("${MTF}" convert --dtd "${DTD}" "${text}" "${trace}")
run("${MTF}" check "${trace}")
run("${MTF}" convert "${trace}" "${back}")
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${text}" "${back}" RESULT_VARIABLE differs)
if(differs)
  message(FATAL_ERROR "${FORMAT}: text -> Meta-TF -> text changed the file (${text} vs ${back})")
endif()

file(SIZE "${text}" text_bytes)
file(SIZE "${trace}" trace_bytes)
math(EXPR text_milli "${text_bytes} * 1000 / ${RECORDS}")
math(EXPR trace_milli "${trace_bytes} * 1000 / ${RECORDS}")
message(STATUS "${FORMAT}: ${RECORDS} records; text ${text_bytes} bytes (${text_milli}/1000 per record), "
               "Meta-TF ${trace_bytes} bytes (${trace_milli}/1000 per record)")
file(REMOVE "${text}" "${back}" "${trace}")
