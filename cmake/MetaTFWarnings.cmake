# metatf_warnings: the warning flags every target of the project builds with.
add_library(metatf_warnings INTERFACE)
target_compile_options(metatf_warnings INTERFACE -Wall -Wextra -Wpedantic $<$<BOOL:${METATF_WERROR}>:-Werror>)
# GCC 12 at -O3 reports -Wrestrict on `"literal" + std::string` inside
# libstdc++, a false positive (GCC bug 105651): still shown, but not an error.
if(METATF_WERROR AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(metatf_warnings INTERFACE -Wno-error=restrict)
endif()

# Sanitizers apply to the whole build, so that libraries and tests agree.
if(METATF_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
