// SPDX-License-Identifier: Apache-2.0
#include "sim/core/error.h"

#include <cctype>
#include <cerrno>
#include <cstring>

namespace clustersim {
namespace {

std::string join(const std::vector<InputError>& errors) {
  std::string out;
  for (const InputError& e : errors) {
    if (!out.empty()) out += '\n';
    out += e.to_string();
  }
  return out;
}

}  // namespace

std::string joined_words(const std::vector<std::string>& words, const char* last) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i == 0 ? "" : i + 1 == words.size() ? last : ", ") + words[i];
  return out;
}

std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string InputError::to_string() const {
  std::string out;
  if (!file.empty()) {
    out.append(file);
    if (line > 0) out.append(":").append(std::to_string(line));
    out.append(": ");
  }
  if (!key_path.empty()) out.append(key_path).append(": ");
  out.append(message);
  return out;
}

BadInput::BadInput(std::vector<InputError> errors)
    : std::runtime_error(join(errors)), errors_(std::move(errors)) {}

void ErrorList::throw_if_any() const {
  if (!errors_.empty()) throw BadInput(errors_);
}

std::string io_reason() {
  std::string why = errno != 0 ? std::strerror(errno) : "unknown reason";
  if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
  return why;
}

}  // namespace clustersim
