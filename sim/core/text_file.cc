// SPDX-License-Identifier: Apache-2.0
#include "sim/core/text_file.h"

#include <filesystem>
#include <fstream>

#include "sim/core/error.h"

namespace clustersim {

std::string read_text_file(const std::string& path, size_t max_bytes, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw BadInput(InputError{path, 0, "", "is a directory; expected " + what});
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(InputError{path, 0, "", "is not a readable file (cannot open it); expected " + what});
  // In chunks up to the limit: a device or pipe has no size to check first.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      throw BadInput(InputError{path, 0, "", "is larger than " + std::to_string(max_bytes >> 20) + " MiB; expected " + what});
    }
  }
  if (in.bad()) throw BadInput(InputError{path, 0, "", "cannot be read; expected " + what});
  return text;
}

}  // namespace clustersim
