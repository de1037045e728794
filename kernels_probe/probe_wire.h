// SPDX-License-Identifier: Apache-2.0
// A minimal Protocol Buffers wire-format encoder, so that the probe needs no libprotobuf.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace clustersim::kernels_probe {

// Appends fields of one message in the protobuf binary encoding
// (https://protobuf.dev/programming-guides/encoding/): a tag varint (field number << 3 | wire
// type), then a varint, 8 little-endian bytes, or a length varint and the bytes. Like libprotobuf
// for proto3 scalars, zero values are not written (a reader sees the same default). Nested
// messages are built in their own WireWriter and added with message().
class WireWriter {
 public:
  void uint(uint32_t field, uint64_t value);           // uint32, uint64, enum (wire type 0)
  void boolean(uint32_t field, bool value);            // bool (wire type 0)
  void float64(uint32_t field, double value);          // double (wire type 1)
  void string(uint32_t field, std::string_view value); // string, bytes (wire type 2)
  // A sub-message, written even when empty (so that a oneof case is still set).
  void message(uint32_t field, const WireWriter& sub);

  const std::string& bytes() const { return bytes_; }

 private:
  void varint(uint64_t v);
  void tag(uint32_t field, uint32_t wire_type);
  std::string bytes_;
};

}  // namespace clustersim::kernels_probe
