# Our own targets are built with -Wall -Wextra -Werror (third-party headers are SYSTEM).
function(ibfabric_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow=local
                                           -Wnon-virtual-dtor -Wimplicit-fallthrough)
endfunction()
