// SPDX-License-Identifier: Apache-2.0
// Content digests: FNV-1a 64-bit (Fowler, Noll and Vo; offset basis 14695981039346656037, prime
// 1099511628211) as 16 hex digits. For telling inputs apart (a sweep log's fingerprint, the
// files a results.json was computed from), not for security.
#pragma once

#include <cstdint>
#include <string>

namespace clustersim {

// The digest of `text`.
std::string digest_hex(const std::string& text);

// The digest of the bytes of the file at `path`, streamed; empty when it cannot be read.
std::string file_digest_hex(const std::string& path);

}  // namespace clustersim
