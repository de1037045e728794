// SPDX-License-Identifier: Apache-2.0
#include "sim/core/text_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "sim/core/error.h"

namespace clustersim {

namespace {

// A pipe (process substitution, a named FIFO): opened without waiting for a writer, then read
// blocking; a FIFO nobody writes to reads as empty at once instead of blocking the run (until
// 2026-12-06 `--set cluster.gpu=FIFO` with no writer hung).
std::string read_pipe(const std::string& path, size_t max_bytes, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) throw BadInput(InputError{path, 0, "", "is not a readable file (cannot open it); expected " + what});
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      throw BadInput(InputError{path, 0, "", "cannot be read; expected " + what});
    }
    if (n == 0) break;
    text.append(chunk, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      throw BadInput(InputError{path, 0, "", "is larger than " + std::to_string(max_bytes >> 20) + " MiB; expected " + what});
    }
  }
  ::close(fd);
  return text;
}

}  // namespace

std::string read_text_file(const std::string& path, size_t max_bytes, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw BadInput(InputError{path, 0, "", "is a directory; expected " + what});
  if (std::filesystem::is_fifo(path, ec)) return read_pipe(path, max_bytes, what);
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
