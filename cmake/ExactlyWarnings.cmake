# Warnings and sanitizers for every target this project builds. Dependencies are included as
# system headers, so their warnings never fail our build.
add_compile_options(-Wall -Wextra -Wno-missing-field-initializers)
if(EXACTLY_WERROR)
  add_compile_options(-Werror)
endif()
if(EXACTLY_SANITIZE)
  # -O1 -g1 (after the build type's flags, so they win): sanitizer builds exist to run the
  # tests, and this halves their compile time while keeping line numbers in reports.
  add_compile_options(-fsanitize=${EXACTLY_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all -O1 -g1)
  add_link_options(-fsanitize=${EXACTLY_SANITIZE})
endif()
