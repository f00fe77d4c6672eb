# metatf_warnings: the warning flags every target of the project builds with.
add_library(metatf_warnings INTERFACE)
target_compile_options(metatf_warnings INTERFACE -Wall -Wextra -Wpedantic $<$<BOOL:${METATF_WERROR}>:-Werror>)

# Sanitizers apply to the whole build, so that libraries and tests agree.
if(METATF_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
