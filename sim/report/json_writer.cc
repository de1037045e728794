// SPDX-License-Identifier: Apache-2.0
#include "sim/report/json_writer.h"

#include <cmath>
#include <cstring>
#include <cstdio>

#include "sim/core/build_info.h"

namespace clustersim::report {

Json::Json(double v) : kind_(Kind::kNumber), number_(v) {}
Json::Json(int v) : kind_(Kind::kInt), int_(v) {}
Json::Json(int64_t v) : kind_(Kind::kInt), int_(v) {}
Json::Json(bool v) : kind_(Kind::kBool), bool_(v) {}
Json::Json(const char* v) : kind_(Kind::kString), string_(v) {}
Json::Json(std::string v) : kind_(Kind::kString), string_(std::move(v)) {}

Json Json::object() {
  Json j;
  j.kind_ = Kind::kObject;
  return j;
}

Json Json::array() {
  Json j;
  j.kind_ = Kind::kArray;
  return j;
}

Json& Json::set(const std::string& key, Json value) {
  Json& slot = (*this)[key];
  slot = std::move(value);
  return slot;
}

Json& Json::operator[](const std::string& key) {
  if (kind_ == Kind::kNull) kind_ = Kind::kObject;
  for (auto& [k, v] : members_) {
    if (k == key) return v;
  }
  members_.emplace_back(key, Json());
  return members_.back().second;
}

Json& Json::push(Json value) {
  if (kind_ == Kind::kNull) kind_ = Kind::kArray;
  items_.push_back(std::move(value));
  return items_.back();
}

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

void Json::for_each_number(const std::function<void(const std::string&, double)>& visit,
                           const std::string& path) const {
  switch (kind_) {
    case Kind::kNumber:
      visit(path, number_);
      break;
    case Kind::kInt:
      visit(path, static_cast<double>(int_));
      break;
    case Kind::kObject:
      for (const auto& [k, v] : members_) v.for_each_number(visit, path.empty() ? k : path + "." + k);
      break;
    case Kind::kArray:
      for (size_t i = 0; i < items_.size(); ++i) items_[i].for_each_number(visit, path + "[" + std::to_string(i) + "]");
      break;
    default:
      break;
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  if (indent > 0) out += '\n';
  return out;
}

void Json::write(std::string& out, int indent, int depth) const {
  const auto newline = [&](int d) {
    if (indent <= 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (kind_) {
    case Kind::kNull: out += "null"; break;
    case Kind::kBool: out += bool_ ? "true" : "false"; break;
    case Kind::kInt: out += std::to_string(int_); break;
    case Kind::kNumber: {
      if (!std::isfinite(number_)) {
        out += "null";  // JSON has no inf/nan
        break;
      }
      char buf[32];
      // A whole number below 2^53 (a count: parameters, FLOPs per token, bytes) exactly, as 10
      // significant digits rounded it (1.747731333e+11 parameters until 2026-12-06), with ".0" so
      // that a key holds a JSON float on every run (until 2026-12-07 77 GiB read `77` and 77.5
      // `77.5`: a schema inferred from one run, pandas' or BigQuery's, typed the key an integer);
      // integer counts are Json(int). The rest to 10 significant digits.
      if (number_ == std::trunc(number_) && std::fabs(number_) < 9007199254740992.0) {
        std::snprintf(buf, sizeof buf, "%.1f", number_ == 0 ? 0.0 : number_);
      } else {
        std::snprintf(buf, sizeof buf, "%.10g", number_);
        // 1234567890.5 prints as 1234567890: still a float.
        if (std::strpbrk(buf, ".e") == nullptr) std::strcat(buf, ".0");
      }
      out += buf;
      break;
    }
    case Kind::kString: out += json_quote(string_); break;
    case Kind::kObject: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : members_) {
        if (!first) out += ',';
        first = false;
        newline(depth + 1);
        out += json_quote(k);
        out += indent > 0 ? ": " : ":";
        v.write(out, indent, depth + 1);
      }
      if (!members_.empty()) newline(depth);
      out += '}';
      break;
    }
    case Kind::kArray: {
      out += '[';
      bool first = true;
      for (const Json& v : items_) {
        if (!first) out += ',';
        first = false;
        newline(depth + 1);
        v.write(out, indent, depth + 1);
      }
      if (!items_.empty()) newline(depth);
      out += ']';
      break;
    }
  }
}

Json build_stamp() {
  Json j = Json::object();
  j.set("version", clustersim_version());
  j.set("build", clustersim_build_id());
  return j;
}

}  // namespace clustersim::report
