// SPDX-License-Identifier: Apache-2.0
#include "sim/core/digest.h"

#include <cstdio>
#include <fstream>

namespace clustersim {
namespace {

constexpr uint64_t kFnvBasis = 14695981039346656037ull;

// `n` more bytes into the hash `h`.
uint64_t fnv1a(uint64_t h, const char* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;  // FNV prime
  }
  return h;
}

std::string hex16(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

std::string digest_hex(const std::string& text) { return hex16(fnv1a(kFnvBasis, text.data(), text.size())); }

std::string file_digest_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  uint64_t h = kFnvBasis;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) h = fnv1a(h, buf, static_cast<size_t>(in.gcount()));
  return hex16(h);
}

}  // namespace clustersim
