# Compiler flags shared by every tony target, carried by the interface target
# `tony_flags`: warnings on, optional -Werror, optional ASan/UBSan.

add_library(tony_flags INTERFACE)
target_compile_options(tony_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wnon-virtual-dtor -Wcast-align
  -Wunused -Woverloaded-virtual -Wnull-dereference -Wformat=2)
if(TONY_WERROR)
  target_compile_options(tony_flags INTERFACE -Werror)
endif()

if(TONY_SANITIZE)
  set(_tony_san -fsanitize=address,undefined -fno-omit-frame-pointer
                -fno-sanitize-recover=undefined)
  target_compile_options(tony_flags INTERFACE ${_tony_san})
  target_link_options(tony_flags INTERFACE ${_tony_san})
endif()

# Helper: register a CAF unit-test binary built from caf/test so that each
# suite is its own ctest entry (CAF's own summary is not a ctest line).
function(tony_add_caf_test_suites target)
  foreach(suite IN LISTS ARGN)
    add_test(NAME "${target}.${suite}"
             COMMAND ${target} -r 60 -s "^${suite}$")
  endforeach()
endfunction()
