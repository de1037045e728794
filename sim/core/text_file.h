// SPDX-License-Identifier: Apache-2.0
// Reading an input file whole, with a size limit: scenarios, suites, profiles and traces are
// kilobytes to megabytes, and /dev/zero or a stray multi-GB file must end in a message, not in
// exhausted memory.
#pragma once

#include <cstddef>
#include <string>

namespace clustersim {

// The contents of `path`. Throws BadInput naming the file when it is a directory, cannot be
// opened or read, or holds more than `max_bytes`; `what` says what was expected ("a YAML file").
std::string read_text_file(const std::string& path, size_t max_bytes, const std::string& what);

}  // namespace clustersim
