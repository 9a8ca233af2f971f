# Our own targets are built with -Wall -Wextra -Werror (third-party headers are SYSTEM).
#
# GCC 12's flow-based string warnings (-Warray-bounds, -Wstringop-overflow, -Wrestrict) report
# std::string operations inlined from libstdc++ that cannot happen (GCC PRs 105329, 105651):
# which call sites trip them depends on inlining, so -O3 and precompiled headers move them
# around. With GCC 12 they stay warnings, printed but not fatal; every other warning is an error.
#
# -Wshadow=local is GCC's (a local shadowing a local); clang has no such subset (its -Wshadow also
# reports locals shadowing members and globals), so the clang trees (the fuzz tree) leave it to
# the GCC trees.
function(ibfabric_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wnon-virtual-dtor
                                           -Wimplicit-fallthrough)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wshadow=local)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-error=array-bounds
                                             -Wno-error=stringop-overflow -Wno-error=restrict)
  endif()
endfunction()
