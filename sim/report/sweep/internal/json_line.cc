// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/internal/json_line.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace clustersim::sweep::internal {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  std::optional<JsonValue> document() {
    JsonValue v;
    skip();
    if (!object(v)) return std::nullopt;
    skip();
    if (pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool literal(const char* word) {
    size_t i = 0;
    while (word[i] && pos_ + i < s_.size() && s_[pos_ + i] == word[i]) ++i;
    if (word[i]) return false;
    pos_ += i;
    return true;
  }
  bool string(std::string& out) {
    if (!eat('"')) return false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return false;
      const char e = s_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return false;
          const long code = std::strtol(s_.substr(pos_, 4).c_str(), nullptr, 16);
          pos_ += 4;
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default: out += e;
      }
    }
    return false;
  }
  bool value(JsonValue& v) {
    skip();
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '{') return object(v);
    if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      return string(v.text);
    }
    if (literal("true")) {
      v.kind = JsonValue::Kind::kBool;
      v.boolean = true;
      return true;
    }
    if (literal("false")) {
      v.kind = JsonValue::Kind::kBool;
      return true;
    }
    if (literal("null")) return true;
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    v.number = std::strtod(begin, &end);
    if (end == begin) return false;
    v.kind = JsonValue::Kind::kNumber;
    pos_ += static_cast<size_t>(end - begin);
    return true;
  }
  bool object(JsonValue& v) {
    if (!eat('{')) return false;
    v.kind = JsonValue::Kind::kObject;
    if (eat('}')) return true;
    do {
      std::string key;
      skip();
      if (!string(key) || !eat(':')) return false;
      JsonValue member;
      if (!value(member)) return false;
      v.members[key] = std::move(member);
    } while (eat(','));
    return eat('}');
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<JsonValue> parse_json_object(const std::string& line) { return Parser(line).document(); }

std::string exact_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace clustersim::sweep::internal
