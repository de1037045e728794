# SPDX-License-Identifier: Apache-2.0
# Every third-party dependency, found once. A missing one stops configure with the Debian package
# that provides it.

function(clustersim_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "clustersim needs ${what}. On Debian/Ubuntu: sudo apt-get install ${package}")
  endif()
endfunction()

find_package(PkgConfig QUIET)
clustersim_require(PKG_CONFIG_FOUND "pkg-config" "pkg-config")

find_package(yaml-cpp QUIET)
clustersim_require(yaml-cpp_FOUND "yaml-cpp" "libyaml-cpp-dev")
if(NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp INTERFACE IMPORTED)
  target_link_libraries(yaml-cpp::yaml-cpp INTERFACE yaml-cpp)
endif()

find_package(Boost 1.74 QUIET COMPONENTS graph)
clustersim_require(Boost_FOUND "Boost.Graph" "libboost-graph-dev")

find_package(Eigen3 3.3 QUIET NO_MODULE)
clustersim_require(Eigen3_FOUND "Eigen3" "libeigen3-dev")

find_package(Protobuf QUIET)
clustersim_require(Protobuf_FOUND "Protocol Buffers (library and protoc)" "libprotobuf-dev protobuf-compiler")

if(CLUSTERSIM_ENABLE_SIMGRID)
  pkg_check_modules(SIMGRID QUIET IMPORTED_TARGET simgrid>=3.32)
  clustersim_require(SIMGRID_FOUND "SimGrid >= 3.32" "libsimgrid-dev")
endif()

if(CLUSTERSIM_BUILD_TESTS)
  find_package(GTest QUIET)
  clustersim_require(GTest_FOUND "GoogleTest" "libgtest-dev")
endif()
