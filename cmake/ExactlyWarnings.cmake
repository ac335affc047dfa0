# Warnings and sanitizers for every target this project builds. Dependencies are included as
# system headers, so their warnings never fail our build.
add_compile_options(-Wall -Wextra -Wno-missing-field-initializers)
if(EXACTLY_WERROR)
  add_compile_options(-Werror)
endif()
if(EXACTLY_SANITIZE)
  add_compile_options(-fsanitize=${EXACTLY_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${EXACTLY_SANITIZE})
endif()
