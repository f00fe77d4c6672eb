# metatf_generate(TARGET <target> DTDS <file.dtd>... [OUTPUT_DIR <dir>])
#
# Generates a C++ reader and writer for each DTD at build time with mtfc
# (--emit=cpp), adds the generated headers to <target>, puts their directory
# on its include path and links it with the Meta-TF runtime. A DTD `x.dtd`
# gives `<OUTPUT_DIR>/x.hpp`; OUTPUT_DIR defaults to a directory of the target
# under the current binary directory. The headers are regenerated when the DTD
# or mtfc changes.
function(metatf_generate)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;OUTPUT_DIR" "DTDS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "metatf_generate: unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_TARGET OR NOT TARGET "${arg_TARGET}")
    message(FATAL_ERROR "metatf_generate: TARGET must name an existing target (got '${arg_TARGET}')")
  endif()
  if(NOT arg_DTDS)
    message(FATAL_ERROR "metatf_generate: DTDS needs at least one .dtd file")
  endif()
  if(NOT arg_OUTPUT_DIR)
    set(arg_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/metatf_generated/${arg_TARGET}")
  endif()
  get_filename_component(out_dir "${arg_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")

  set(headers)
  foreach(dtd IN LISTS arg_DTDS)
    get_filename_component(dtd_path "${dtd}" ABSOLUTE)
    get_filename_component(stem "${dtd_path}" NAME_WE)
    set(header "${out_dir}/${stem}.hpp")
    add_custom_command(
      OUTPUT "${header}"
      COMMAND MetaTF::mtfc --emit=cpp -o "${out_dir}" "${dtd_path}"
      DEPENDS "${dtd_path}" MetaTF::mtfc
      COMMENT "Generating ${stem}.hpp from ${dtd}"
      VERBATIM)
    list(APPEND headers "${header}")
  endforeach()

  target_sources(${arg_TARGET} PRIVATE ${headers})
  target_include_directories(${arg_TARGET} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_link_libraries(${arg_TARGET} PUBLIC MetaTF::runtime)
endfunction()
