# metatf_generate(TARGET <target> DTDS <file.dtd>... [OUTPUT_DIR <dir>]
#                 [NAME <name>] [NAMESPACE <namespace>])
#
# Generates a C++ reader and writer for each DTD at build time with mtfc
# (--emit=cpp), adds the generated headers to <target>, puts their directory
# on its include path and links it with the Meta-TF runtime. A DTD `x.dtd`
# gives `<OUTPUT_DIR>/x.hpp`, named as mtfc names it: the file name without
# its last extension (`lackey.v2.dtd` gives `lackey.v2.hpp`, in namespace
# `lackey_v2`). NAME and NAMESPACE, for a single DTD, pass mtfc's --name and
# --namespace: the DTD's name (and so the header's, NAME.hpp) and the C++
# namespace. OUTPUT_DIR defaults to a directory of the target under the
# current binary directory. The headers are regenerated when the DTD or mtfc
# changes.
function(metatf_generate)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;OUTPUT_DIR;NAME;NAMESPACE" "DTDS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "metatf_generate: unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_TARGET OR NOT TARGET "${arg_TARGET}")
    message(FATAL_ERROR "metatf_generate: TARGET must name an existing target (got '${arg_TARGET}')")
  endif()
  if(NOT arg_DTDS)
    message(FATAL_ERROR "metatf_generate: DTDS needs at least one .dtd file")
  endif()
  list(LENGTH arg_DTDS dtd_count)
  if((DEFINED arg_NAME OR DEFINED arg_NAMESPACE) AND NOT dtd_count EQUAL 1)
    message(FATAL_ERROR "metatf_generate: NAME and NAMESPACE name one DTD; call metatf_generate once for each")
  endif()
  if(NOT arg_OUTPUT_DIR)
    set(arg_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/metatf_generated/${arg_TARGET}")
  endif()
  get_filename_component(out_dir "${arg_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  set(options)
  if(DEFINED arg_NAME)
    list(APPEND options --name "${arg_NAME}")
  endif()
  if(DEFINED arg_NAMESPACE)
    list(APPEND options --namespace "${arg_NAMESPACE}")
  endif()

  set(headers)
  foreach(dtd IN LISTS arg_DTDS)
    get_filename_component(dtd_path "${dtd}" ABSOLUTE)
    if(DEFINED arg_NAME)
      set(name "${arg_NAME}")
    else()
      # mtfc's rule: the file name without its last extension (NAME_WE would cut at the first dot).
      get_filename_component(name "${dtd_path}" NAME_WLE)
    endif()
    set(header "${out_dir}/${name}.hpp")
    add_custom_command(
      OUTPUT "${header}"
      COMMAND MetaTF::mtfc --emit=cpp -f -o "${out_dir}" ${options} "${dtd_path}"
      DEPENDS "${dtd_path}" MetaTF::mtfc
      COMMENT "Generating ${name}.hpp from ${dtd}"
      VERBATIM)
    list(APPEND headers "${header}")
  endforeach()

  target_sources(${arg_TARGET} PRIVATE ${headers})
  target_include_directories(${arg_TARGET} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_link_libraries(${arg_TARGET} PUBLIC MetaTF::runtime)
endfunction()
