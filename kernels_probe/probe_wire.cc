// SPDX-License-Identifier: Apache-2.0
// Protocol Buffers wire-format encoder (varints, fixed64 doubles, length-delimited fields).
#include "kernels_probe/probe_wire.h"

#include <cstring>

namespace clustersim::kernels_probe {
namespace {

constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLengthDelimited = 2;

}  // namespace

void WireWriter::varint(uint64_t v) {
  // Seven bits per byte, least significant group first; the high bit says "more follows".
  while (v >= 0x80) {
    bytes_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  bytes_.push_back(static_cast<char>(v));
}

void WireWriter::tag(uint32_t field, uint32_t wire_type) {
  varint((static_cast<uint64_t>(field) << 3) | wire_type);
}

void WireWriter::uint(uint32_t field, uint64_t value) {
  if (value == 0) return;
  tag(field, kVarint);
  varint(value);
}

void WireWriter::boolean(uint32_t field, bool value) {
  if (!value) return;
  tag(field, kVarint);
  varint(1);
}

void WireWriter::float64(uint32_t field, double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  if (bits == 0) return;  // +0.0 only; -0.0 has the sign bit and is written, as libprotobuf does
  tag(field, kFixed64);
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void WireWriter::string(uint32_t field, std::string_view value) {
  if (value.empty()) return;
  tag(field, kLengthDelimited);
  varint(value.size());
  bytes_.append(value);
}

void WireWriter::message(uint32_t field, const WireWriter& sub) {
  tag(field, kLengthDelimited);
  varint(sub.bytes_.size());
  bytes_.append(sub.bytes_);
}

}  // namespace clustersim::kernels_probe
