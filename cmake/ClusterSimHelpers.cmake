# SPDX-License-Identifier: Apache-2.0
# clustersim_add_library(NAME SRCS ... [DEPS ...] [PRIVATE_DEPS ...]): one static library per layer;
# DEPS are the lower layers (and third-party targets) it may use.
# clustersim_add_test(NAME SRCS ... [DEPS ...] [LABELS ...]): a GoogleTest binary whose tests
# CTest discovers one by one.

set(CLUSTERSIM_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter
    $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)  # GCC 12 false positives in std::string

function(clustersim_apply_flags target)
  target_compile_options(${target} PRIVATE ${CLUSTERSIM_WARNINGS})
  if(CLUSTERSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CLUSTERSIM_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

function(clustersim_add_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  clustersim_apply_flags(${name})
endfunction()

function(clustersim_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})  # tests/unit/*.h helpers
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    CLUSTERSIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CLUSTERSIM_BINARY_DIR="${PROJECT_BINARY_DIR}")
  clustersim_apply_flags(${name})
  include(GoogleTest)
  # TIMEOUT (seconds): ctest's limit for each discovered test, for tests that can hang.
  set(_timeout "")
  if(ARG_TIMEOUT)
    set(_timeout TIMEOUT ${ARG_TIMEOUT})
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" ${_timeout} DISCOVERY_TIMEOUT 60)
endfunction()
