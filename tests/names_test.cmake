# The names of generated code: mtfc turns a DTD's name into a namespace that
# compiles, whatever the name (docs/dtd-language.md, section 11). Generates
# headers from standard input, from a dotted file name, from a file named
# like a predefined macro, with --name and with --namespace, checks the header
# names and namespaces, then compiles one file that includes them all, with
# GNU extensions on (they predefine the macro 'linux').
# Run by CTest as:
#   cmake -DMTFC=... -DCXX=... -DRUNTIME_INCLUDE=... -DSOURCE_DIR=... -DWORK_DIR=... -P names_test.cmake

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/gen")
configure_file("${SOURCE_DIR}/tests/fixtures/features.dtd" "${WORK_DIR}/lackey.v2.dtd" COPYONLY)
configure_file("${SOURCE_DIR}/dtds/hatf10.dtd" "${WORK_DIR}/linux.dtd" COPYONLY)

# generate(<header> <namespace> <input file> <mtfc arguments>...)
function(generate header namespace input)
  execute_process(COMMAND ${MTFC} --emit=cpp -f -o "${WORK_DIR}/gen" ${ARGN} INPUT_FILE "${input}"
                  RESULT_VARIABLE code ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "mtfc --emit=cpp ${ARGN} < ${input}: exit ${code}\n${err}")
  endif()
  if(NOT EXISTS "${WORK_DIR}/gen/${header}")
    message(FATAL_ERROR "mtfc --emit=cpp ${ARGN} did not write ${header}")
  endif()
  file(STRINGS "${WORK_DIR}/gen/${header}" opening REGEX "^namespace [^ ]+ {$")
  list(GET opening 0 opening)
  if(NOT opening STREQUAL "namespace ${namespace} {")
    message(FATAL_ERROR "${header} opens '${opening}', expected 'namespace ${namespace} {'")
  endif()
endfunction()

generate(stdin.hpp stdin_ "${SOURCE_DIR}/dtds/spc.dtd" -)
generate(lackey.v2.hpp lackey_v2 /dev/null "${WORK_DIR}/lackey.v2.dtd")
generate(linux.hpp linux_ /dev/null "${WORK_DIR}/linux.dtd")
generate(2d.hpp _2d "${SOURCE_DIR}/dtds/laplace.dtd" --name 2d -)
generate(charisma.v1.hpp charisma "${SOURCE_DIR}/dtds/charisma.dtd" --name=charisma.v1 --namespace charisma -)
# Records named like the names generated code declares itself.
file(WRITE "${WORK_DIR}/clash.dtd" [=[
tag.width = 1;
n.width = 2;
n.interpretation = none;
byTag : (tag, n) { tag.value = 4; }
reader : (tag, n) { tag.value = 5; }
codec : (tag, n) { tag.value = 6; }
]=])
generate(clash.hpp clash /dev/null "${WORK_DIR}/clash.dtd")

# The names the traces carry are the DTD names, not the namespaces.
file(WRITE "${WORK_DIR}/use.cpp" [=[
#include <cstdio>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "2d.hpp"
#include "charisma.v1.hpp"
#include "clash.hpp"
#include "lackey.v2.hpp"
#include "linux.hpp"
#include "stdin.hpp"

static_assert(std::string_view(stdin_::dtd.name) == "stdin");
static_assert(std::string_view(lackey_v2::dtd.name) == "lackey.v2");
static_assert(std::string_view(linux_::dtd.name) == "linux");
static_assert(std::string_view(_2d::dtd.name) == "2d");
static_assert(std::string_view(charisma::dtd.name) == "charisma.v1");
static_assert(std::is_same_v<clash::Codec::ByTag, std::tuple<clash::ByTag, clash::Reader_, clash::Codec_>>);

int main() { return stdin == nullptr; }  // the macro is still the standard one
]=])
execute_process(
  COMMAND "${CXX}" -std=gnu++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror
          -I "${WORK_DIR}/gen" -I "${RUNTIME_INCLUDE}" "${WORK_DIR}/use.cpp"
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "the generated headers do not compile together:\n${out}")
endif()
