# Both tracers across exec (docs/tracers.md, "exec"): exec_workload's marks
# (exec_workload.cpp) counted exactly in each trace by the tracer's checker.
# Run by CTest as heaptrace_exec and iotrace_exec:
# cmake -DTRACER=... -DCHECK=... -DMTF=... -DWORKLOAD=... -DWORK_DIR=... -P exec_test.cmake

function(run expected_code)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY "${WORK_DIR}")
  if(NOT code STREQUAL expected_code)
    message(FATAL_ERROR "${ARGN}: exit ${code}, expected ${expected_code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

# The line the checker prints for stage S's marks.
function(mark_line s out_var)
  math(EXPR blocks "${s} + 10")
  math(EXPR writes "${s} + 1")
  math(EXPR bytes "${writes} * 10")
  if(TRACER MATCHES "heaptrace")
    set(${out_var} "4000${s}: ${blocks} allocs, ${blocks} frees\n" PARENT_SCOPE)
  else()
    set(${out_var} "stage${s}.dat: 1 opens, ${writes} writes of ${bytes} bytes, 1 closes\n" PARENT_SCOPE)
  endif()
endfunction()

# `trace` passes mtf check and holds the marks of exactly the stages listed.
function(expect_marks trace)
  run(0 ${MTF} check "${trace}")
  set(want "")
  foreach(s IN LISTS ARGN)
    mark_line(${s} line)
    string(APPEND want "${line}")
  endforeach()
  run(0 ${CHECK} --marks "${trace}")
  if(NOT out STREQUAL want)
    message(FATAL_ERROR "${trace}: marks\n${out}expected\n${want}")
  endif()
endfunction()

# The workload under the tracer: nothing on stderr, no temporary file left.
function(trace_workload)
  run(0 ${TRACER} ${ARGN})
  if(NOT err STREQUAL "")
    message(FATAL_ERROR "the traced run wrote to stderr:\n${err}")
  endif()
  file(GLOB partial "${WORK_DIR}/*.partial")
  if(partial)
    message(FATAL_ERROR "temporary files left behind: ${partial}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# The traces whose names match `glob`, which must be exactly `expected`.
function(expect_traces glob expected)
  file(GLOB traces RELATIVE "${WORK_DIR}" "${WORK_DIR}/${glob}")
  list(SORT traces)
  if(NOT traces STREQUAL "${expected}")
    message(FATAL_ERROR "traces ${glob}: '${traces}', expected '${expected}'")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Each function of the family: the image before the exec has stage 1 in a
# trace of its own, the image after has stage 2 in PATH.exec1.
foreach(how IN ITEMS execve execv execvp execvpe execl execle execlp fexecve execveat thread)
  trace_workload(-o "${WORK_DIR}/${how}.%p.mtf" -- ${WORKLOAD} "${WORK_DIR}" 1 ${how})
  file(GLOB first "${WORK_DIR}/${how}.*.mtf")
  get_filename_component(name "${first}" NAME)
  expect_traces("${how}.*" "${name};${name}.exec1")
  expect_marks("${first}" 1)
  expect_marks("${first}.exec1" 2)
endforeach()

# An exec of a path that does not exist changes nothing: one trace.
trace_workload(-o "${WORK_DIR}/missing.%p.mtf" -- ${WORKLOAD} "${WORK_DIR}" 1 missing)
file(GLOB trace "${WORK_DIR}/missing.*")
expect_marks("${trace}" 1 2)

# An exec that fails in the kernel (the script's interpreter is missing)
# after the trace was finished: the process goes on in PATH.exec1.
file(WRITE "${WORK_DIR}/no-interpreter.sh" "#!/nonexistent/interpreter\n")
file(CHMOD "${WORK_DIR}/no-interpreter.sh" FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
trace_workload(-o "${WORK_DIR}/broken.%p.mtf" -- ${WORKLOAD} "${WORK_DIR}" 1 broken)
file(GLOB first "${WORK_DIR}/broken.*.mtf")
get_filename_component(name "${first}" NAME)
expect_traces("broken.*" "${name};${name}.exec1")
expect_marks("${first}" 1)
expect_marks("${first}.exec1" 2)

# A forked child that execs, with a name without %p: the child's own image
# is PATH.PID, the program it execs PATH.PID.exec1.
trace_workload(-o "${WORK_DIR}/fork.mtf" -- ${WORKLOAD} "${WORK_DIR}" 1 fork)
string(REGEX MATCH "child ([0-9]+)" _ "${out}")
set(child ${CMAKE_MATCH_1})
expect_traces("fork.*" "fork.mtf;fork.mtf.${child};fork.mtf.${child}.exec1")
expect_marks("${WORK_DIR}/fork.mtf" 1)
expect_marks("${WORK_DIR}/fork.mtf.${child}")
expect_marks("${WORK_DIR}/fork.mtf.${child}.exec1" 2)

# A vfork child shares its parent's memory: its exec leaves the parent's
# trace alone (the parent goes on with stage 3 in it), and the program it
# runs is a descendant, PATH.PID.
trace_workload(-o "${WORK_DIR}/vfork.mtf" -- ${WORKLOAD} "${WORK_DIR}" 1 vfork)
string(REGEX MATCH "child ([0-9]+)" _ "${out}")
set(child ${CMAKE_MATCH_1})
expect_traces("vfork.*" "vfork.mtf;vfork.mtf.${child}")
expect_marks("${WORK_DIR}/vfork.mtf" 1 3)
expect_marks("${WORK_DIR}/vfork.mtf.${child}" 2)
