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
  if(EXACTLY_SANITIZE MATCHES "thread")
    # GCC warns that TSan does not model std::atomic_thread_fence, which Asio's headers use
    # (fenced blocks around handlers, reference counts). The loop's hand-offs also go through
    # its mutex, which TSan sees; scripts/tsan.sh. And with TSan's instrumentation GCC 12 takes
    # an engaged std::optional's members for maybe uninitialized (sdk/src/spool/block.cc); the
    # other builds keep that warning.
    add_compile_options(-Wno-tsan -Wno-maybe-uninitialized)
  endif()
endif()
