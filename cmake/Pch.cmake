# Precompiled headers for the targets whose translation units all parse the same heavy headers
# (the C++ library, nlohmann/json, cpp-httplib, spdlog, GoogleTest). CI builds two trees on two
# cores; parsing these once per target instead of once per file is most of what a clean build
# can save. The header sets follow what each target links: a target gets only headers of
# libraries it already depends on, so a PCH never hides a missing dependency.
#
# IBFABRIC_PCH=OFF builds without them (to check that every file includes what it uses).
option(IBFABRIC_PCH "Use precompiled headers for the heavy targets" ON)

set(IBFABRIC_PCH_STD <algorithm> <array> <atomic> <chrono> <cstdint> <filesystem> <fstream>
    <functional> <map> <memory> <mutex> <optional> <set> <string> <string_view> <thread>
    <unordered_map> <vector>)

# ibfabric_pch(target [JSON] [HTTP] [LOG] [GTEST] [GMOCK])
function(ibfabric_pch target)
  if(NOT IBFABRIC_PCH)
    return()
  endif()
  cmake_parse_arguments(PCH "JSON;HTTP;LOG;GTEST;GMOCK" "" "" ${ARGN})
  set(headers ${IBFABRIC_PCH_STD})
  if(PCH_JSON)
    list(APPEND headers <nlohmann/json.hpp>)
  endif()
  if(PCH_HTTP)
    list(APPEND headers <httplib.h>)
  endif()
  if(PCH_LOG)
    list(APPEND headers <spdlog/spdlog.h>)
  endif()
  if(PCH_GTEST)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  if(PCH_GMOCK)
    list(APPEND headers <gmock/gmock.h>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
