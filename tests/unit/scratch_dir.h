// SPDX-License-Identifier: Apache-2.0
// A fresh directory under the system's temporary directory for one test's files, removed with
// everything in it when the object goes out of scope, so that test runs leave nothing behind.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

namespace clustersim::testing {

class ScratchDir {
 public:
  // The directory is `<tmp>/<prefix>-XXXXXX`, unique to this object (mkdtemp).
  explicit ScratchDir(const std::string& prefix = "clustersim") {
    std::string templ = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(templ.data())) path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(ScratchDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ScratchDir& operator=(ScratchDir&&) = delete;

  // Empty when the directory could not be made.
  bool ok() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace clustersim::testing
