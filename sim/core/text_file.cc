// SPDX-License-Identifier: Apache-2.0
#include "sim/core/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "sim/core/error.h"

namespace clustersim {

std::string read_text_file(const std::string& path, size_t max_bytes, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw BadInput(InputError{path, 0, "", "is a directory; expected " + what});
  const auto fail = [&](const std::string& why) { return BadInput(InputError{path, 0, "", why + "; expected " + what}); };
  // Opened without waiting for a writer, then read blocking: a named pipe nobody writes to reads
  // as empty at once instead of blocking the run (until 2026-12-06 `--set cluster.gpu=FIFO` hung);
  // process substitution's pipe, a regular file or a device read as before.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) throw fail("is not a readable file (cannot open it)");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  // In chunks up to the limit: a device or pipe has no size to check first.
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      throw fail("cannot be read");
    }
    if (n == 0) break;
    text.append(chunk, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      ::close(fd);
      throw fail("is larger than " + std::to_string(max_bytes >> 20) + " MiB");
    }
  }
  // A named pipe nobody has written to yet reads as empty: say what it is rather than "empty".
  struct stat st {};
  const bool fifo = text.empty() && ::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
  ::close(fd);
  if (fifo) throw fail("is a named pipe with nothing written to it yet (it is read without waiting)");
  return text;
}

}  // namespace clustersim
