// SPDX-License-Identifier: Apache-2.0
// Errors about user input (scenarios, probe files, CLI flags): where, which key, what was expected.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim {

// Words as a message lists them: "a", "a and b", "a, b and c" (`last` " or " for a choice).
std::string joined_words(const std::vector<std::string>& words, const char* last = " and ");

// ASCII lower case, for matching names whatever their letter case (did-you-mean suggestions,
// NCCL algorithm names).
std::string ascii_lower(std::string s);

// One problem in one input. `line` is 1-based, 0 when unknown; `key_path` is "model.hidden" style.
struct InputError {
  std::string file;
  int line = 0;
  std::string key_path;
  std::string message;

  // "file:line: key.path: message", leaving out the parts that are unknown.
  std::string to_string() const;
};

// Thrown when input is invalid; carries every problem found, not only the first. The CLI turns it
// into exit code 2. Internal bugs use other exception types (exit code 1).
class BadInput : public std::runtime_error {
 public:
  explicit BadInput(std::vector<InputError> errors);
  explicit BadInput(InputError error) : BadInput(std::vector<InputError>{std::move(error)}) {}
  const std::vector<InputError>& errors() const { return errors_; }

 private:
  std::vector<InputError> errors_;
};

// Collects errors while checking, then throws them all at once.
class ErrorList {
 public:
  void add(InputError e) { errors_.push_back(std::move(e)); }
  bool empty() const { return errors_.empty(); }
  size_t size() const { return errors_.size(); }
  const std::vector<InputError>& errors() const { return errors_; }
  // Throws BadInput when any error was added.
  void throw_if_any() const;

 private:
  std::vector<InputError> errors_;
};

// Why the last file operation failed, from errno, in lower case ("no such file or directory");
// "unknown reason" when errno says nothing (a stream may fail without setting it). Clear errno
// before the operation.
std::string io_reason();

}  // namespace clustersim
