// SPDX-License-Identifier: Apache-2.0
#include "sim/core/map_reader.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cctype>
#include <cmath>
#include <numeric>
#include <vector>

#include "sim/core/unit_parse.h"

namespace clustersim {
namespace {


// A plain decimal, the whole text: from_chars takes an optional '-' and no '+', leading spaces or
// hexadecimal, and anything left over (a trailing space, ".0" on an integer) refuses it, as does a
// leading zero (until 2026-12-06 `tp: 08` passed as 8). A '+' was skipped here until 2026-12-05,
// so `tp: +8` and --set parallelism.tp=+4 passed as 8 and 4.
template <typename T>
std::optional<T> parse_number(const std::string& text) {
  if (leading_zero(text)) return std::nullopt;
  T value{};
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end) return std::nullopt;
  return value;
}

// What a number written with a sign or spaces gets told, after what was expected: the forms
// look like numbers but are not the plain decimal a scenario takes.
std::string plain_form_hint(const std::string& text) {
  const bool padded = !text.empty() && (std::isspace(static_cast<unsigned char>(text.front())) ||
                                        std::isspace(static_cast<unsigned char>(text.back())));
  const size_t first = text.find_first_not_of(" \t");
  const bool plus = first != std::string::npos && text[first] == '+';
  if (leading_zero(text)) return " (a plain decimal without leading zeros: YAML 1.1 tools read 010 as octal 8)";
  if (!padded && !plus) return "";
  return " (a plain decimal: no '+' sign, no spaces around the digits)";
}

}  // namespace

// "08", "-010": YAML 1.1 tools (PyYAML among them) read a leading 0 as octal, YAML 1.2 as
// decimal, so a scenario shared between tools could mean two numbers; neither is taken. A real
// such as "00.05" or "01e3" reads the same in both (YAML 1.1's octal has digits only): taken
// (until 2026-12-06 it was refused with the octal hint).
bool leading_zero(const std::string& text) {
  const size_t digits = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return text.size() > digits + 1 && text[digits] == '0' &&
         std::isdigit(static_cast<unsigned char>(text[digits + 1])) &&
         text.find_first_of(".eE", digits) == std::string::npos;
}

int edit_distance(const std::string& a, const std::string& b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_name(const std::string& name, const std::set<std::string>& known) {
  std::string best;
  int best_distance = 3;  // suggest only close matches
  // Of names as close, the one sharing the longest start: 'tpp' suggests 'tp', not 'pp' (which it
  // did until 2026-12-06, as the first in name order).
  const auto shared_start = [&name](const std::string& k) {
    size_t n = 0;
    while (n < name.size() && n < k.size() && name[n] == k[n]) ++n;
    return n;
  };
  for (const std::string& k : known) {
    // Case differences count as nothing: 'TP' suggests 'tp'.
    const int d = ascii_lower(name) == ascii_lower(k) ? 0 : edit_distance(name, k);
    if (d < best_distance || (d == best_distance && !best.empty() && shared_start(k) > shared_start(best))) {
      best_distance = d;
      best = k;
    }
  }
  return best;
}

std::string key_holding(const std::string& name, const std::set<std::string>& known) {
  std::string best;
  const auto holds_at_edge = [](const std::string& outer, const std::string& inner) {
    if (inner.size() < 4 || inner.size() >= outer.size()) return false;
    for (size_t at = outer.find(inner); at != std::string::npos; at = outer.find(inner, at + 1)) {
      const bool starts = at == 0 || outer[at - 1] == '_';
      const bool ends = at + inner.size() == outer.size() || outer[at + inner.size()] == '_';
      if (starts && ends) return true;
    }
    return false;
  };
  for (const std::string& k : known) {
    if ((holds_at_edge(name, k) || holds_at_edge(k, name)) && k.size() > best.size()) best = k;
  }
  return best;
}

std::optional<double> plain_real(const YamlNode& n) {
  if (!n.is_scalar()) return std::nullopt;
  const auto v = parse_number<double>(n.scalar);
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return v;
}

std::optional<long long> plain_integer(const YamlNode& n) {
  if (!n.is_scalar()) return std::nullopt;
  return parse_number<long long>(n.scalar);
}

namespace {

// "a:b" as whole counts above zero; nullopt otherwise (also without a colon).
std::optional<std::pair<long long, long long>> port_counts(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const auto down = parse_number<long long>(text.substr(0, colon));
  const auto up = parse_number<long long>(text.substr(colon + 1));
  if (!down || !up || *down <= 0 || *up <= 0) return std::nullopt;
  return std::pair{*down, *up};
}

}  // namespace

std::optional<double> plain_ratio(const YamlNode& n) {
  if (!n.is_scalar()) return std::nullopt;
  if (n.scalar.find(':') == std::string::npos) return plain_real(n);
  const auto counts = port_counts(n.scalar);
  if (!counts) return std::nullopt;
  return static_cast<double>(counts->first) / static_cast<double>(counts->second);
}

MapReader::MapReader(const YamlNode* node, std::string path, ErrorList& errors, const YamlNode* origin)
    : node_(node), path_(std::move(path)), errors_(errors) {
  if (const YamlNode* at = node_ ? node_ : origin) {
    origin_file_ = at->file;
    origin_line_ = at->line;
  }
  if (node_ && node_->is_null()) node_ = nullptr;
  if (node_ && !node_->is_map()) {
    errors_.add(InputError{node_->file, node_->line, path_,
                           std::string("expected a mapping of keys, got ") + node_->kind_name()});
    node_ = nullptr;
    not_a_map_ = true;
  }
}

std::string MapReader::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

const std::string& MapReader::file() const { return node_ ? node_->file : origin_file_; }

bool MapReader::has(const std::string& key) const { return node_ && node_->find(key); }

const YamlNode* MapReader::child(const std::string& key) {
  known_.insert(key);
  return node_ ? node_->find(key) : nullptr;
}

MapReader MapReader::section(const std::string& key) {
  const YamlNode* n = child(key);
  // `network:` with nothing under it reads as null: refused as a leaf key written so is (since
  // 2026-12-06; before, taken as absent, and `dcqcn:` alone as present with every default).
  const bool empty = n && n->is_null();
  if (empty) errors_.add(InputError{n->file, n->line, key_path(key), "has no value; give its keys under it"});
  // An absent section's errors (its required keys) point at the enclosing mapping.
  MapReader r(n, key_path(key), errors_, node_);
  if (!n && !node_) {
    r.origin_file_ = origin_file_;
    r.origin_line_ = origin_line_;
  }
  r.not_a_map_ = r.not_a_map_ || empty;  // said once: not again as each of its required keys
  return r;
}

void MapReader::error(const std::string& key, const std::string& message) {
  const YamlNode* n = node_ ? node_->find(key) : nullptr;
  if (const YamlNode* where = n ? n : node_) {
    errors_.add(InputError{where->file, where->line, key_path(key), message});
  } else {
    errors_.add(InputError{origin_file_, origin_line_, key_path(key), message});
  }
}

void MapReader::missing(const std::string& key) {
  if (not_a_map_) return;
  // A key the file gives but a --set removed: say so, as the line named is the file's.
  const bool removed = node_ && std::find(node_->removed.begin(), node_->removed.end(), key) != node_->removed.end();
  error(key, removed ? "required key is missing (removed by --set " + (path_.empty() ? key : path_ + "." + key) + "=null)"
                     : "required key is missing");
}

const YamlNode* MapReader::scalar(const std::string& key, Need need) {
  const YamlNode* n = child(key);
  if (!n) {
    if (need == Need::kRequired) missing(key);
    return nullptr;
  }
  if (n->is_null()) {
    // `key:` with nothing after it reads as null; taking the default would hide the omission.
    errors_.add(InputError{n->file, n->line, key_path(key), "has no value; give one, or remove the key for its default"});
    return nullptr;
  }
  if (!n->is_scalar()) {
    errors_.add(InputError{n->file, n->line, key_path(key),
                           std::string("expected a single value, got ") + n->kind_name()});
    return nullptr;
  }
  return n;
}

void MapReader::fail(const std::string& key, const YamlNode& n, const std::string& expected) {
  // Line breaks and tabs in the value shown as escapes ('8\r' from a --set printed as '8', the
  // carriage return moving the cursor, until 2026-12-06).
  std::string shown;
  for (const char c : n.scalar) {
    if (c == '\r') shown += "\\r";
    else if (c == '\n') shown += "\\n";
    else if (c == '\t') shown += "\\t";
    else shown += c;
  }
  errors_.add(InputError{n.file, n.line, key_path(key), "expected " + expected + ", got '" + shown + "'"});
}

bool MapReader::read(const std::string& key, int& out, Need need, int min, int max) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  const auto v = parse_number<long long>(n->scalar);
  std::string range = "an integer";
  if (min != INT32_MIN && max != INT32_MAX) {
    range += " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  } else if (min != INT32_MIN) {
    range += " >= " + std::to_string(min);
  } else if (max != INT32_MAX) {
    range += " <= " + std::to_string(max);
  }
  // Past what the field holds, or past what a 64-bit integer holds: the bound the message named was
  // not the one that refused it ('18446744073709551616' read "expected an integer >= 1" until
  // 2026-12-06).
  const std::string& t = n->scalar;
  const size_t lead = !t.empty() && t.front() == '-' ? 1 : 0;
  const bool too_long = t.size() > lead + 18 && t[lead] != '0' && t.find_first_not_of("0123456789", lead) == std::string::npos;
  if ((v && (*v > INT32_MAX || *v < INT32_MIN)) || (!v && too_long)) {
    range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  }
  // No minus sign where no value below zero is allowed, not even on 0 ('-0' read as 0 until
  // 2026-12-05).
  if (!v || *v < min || *v > max || (min >= 0 && n->scalar.front() == '-')) {
    fail(key, *n, range + plain_form_hint(n->scalar));
    return false;
  }
  out = static_cast<int>(*v);
  return true;
}

bool MapReader::read(const std::string& key, uint64_t& out, Need need) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  const auto v = parse_number<unsigned long long>(n->scalar);
  if (!v) {
    fail(key, *n, "a non-negative integer" + plain_form_hint(n->scalar));
    return false;
  }
  out = *v;
  return true;
}

bool MapReader::read(const std::string& key, double& out, Need need, double min, double max) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  const auto v = parse_number<double>(n->scalar);
  // -0 where no value below zero is allowed would be stored, and printed, as -0.
  if (!v || !std::isfinite(*v) || *v < min || *v > max || (min >= 0 && std::signbit(*v))) {
    std::string range = "a number";
    // The upper bound too where it is the one the value passed (1e308 read "expected a number >=
    // 1" until 2026-12-06).
    const bool above = v && std::isfinite(*v) && *v > max;
    if (min > -1e300) range += " >= " + format_number(min);
    if (max < 1e300 || above) range += (min > -1e300 ? " and <= " : " <= ") + format_number(max);
    fail(key, *n, range + plain_form_hint(n->scalar));
    return false;
  }
  out = *v;
  return true;
}

bool MapReader::read_ratio(const std::string& key, double& out, double min, double max, int ports) {
  const YamlNode* n = scalar(key, Need::kOptional);
  if (!n) return false;
  const std::string& text = n->scalar;
  const std::optional<double> v = plain_ratio(*n);
  // Port counts add up to the switch's ports; anything else is a ratio, written in lowest terms
  // ("3:1"): "60:20" on a 64-port switch would otherwise pass as 48:16.
  if (const auto counts = port_counts(text); counts && ports > 0) {
    const auto [down, up] = *counts;
    const long long common = std::gcd(down, up);
    if (down + up != ports && common != 1) {
      fail(key, *n,
           "port counts that add up to the switch's " + std::to_string(ports) + " ports (\"" + text + "\" gives " +
               std::to_string(down + up) + "), or a ratio in lowest terms (\"" + std::to_string(down / common) + ":" +
               std::to_string(up / common) + "\")");
      return false;
    }
  }
  if (!v || !std::isfinite(*v) || *v < min || *v > max) {
    fail(key, *n,
         "a down:up ratio, as a number or as whole port counts (\"86:42\"), >= " + format_number(min) +
             " and <= " + format_number(max) + plain_form_hint(text));
    return false;
  }
  out = *v;
  return true;
}

bool MapReader::read(const std::string& key, bool& out, Need need) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  if (n->scalar == "true") {
    out = true;
  } else if (n->scalar == "false") {
    out = false;
  } else {
    fail(key, *n, "true or false");
    return false;
  }
  return true;
}

bool MapReader::read(const std::string& key, std::string& out, Need need) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  out = n->scalar;
  return true;
}

bool MapReader::read_text(const std::string& key, std::string& out, const std::string& what, Need need) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  if (n->scalar.empty()) {
    errors_.add(InputError{n->file, n->line, key_path(key), "is empty; expected " + what});
    return false;
  }
  // Names, labels, sources and file names are one line: a line break (a quoted "\n", or the one a
  // block scalar '>' or '|' ends with) would break the summaries and tables they are printed in.
  if (n->scalar.find_first_of("\n\r") != std::string::npos) {
    errors_.add(InputError{n->file, n->line, key_path(key),
                           "has a line break; expected " + what + " on one line (a folded block keeps it on one "
                           "with '>-')"});
    return false;
  }
  out = n->scalar;
  return true;
}

bool MapReader::read(const std::string& key, Time& out, Need need) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  const auto v = parse_time(n->scalar);
  if (!v) {
    fail(key, *n, kTimeForm);
    return false;
  }
  out = *v;
  return true;
}

bool MapReader::read(const std::string& key, Bytes& out, Need need) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  const auto v = parse_bytes(n->scalar);
  if (!v) {
    fail(key, *n, kBytesForm);
    return false;
  }
  out = *v;
  return true;
}

bool MapReader::read(const std::string& key, Bandwidth& out, Need need) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  const auto v = parse_bandwidth(n->scalar);
  if (!v || v->bytes_per_s <= 0) {
    fail(key, *n, kBandwidthForm);
    return false;
  }
  out = *v;
  return true;
}

bool MapReader::read(const std::string& key, std::optional<Bandwidth>& out) {
  Bandwidth bw;
  if (!read(key, bw)) return false;
  out = bw;
  return true;
}

bool MapReader::read(const std::string& key, FlopRate& out, Need need) {
  const YamlNode* n = scalar(key, need);
  if (!n) return false;
  const auto v = parse_flop_rate(n->scalar);
  if (!v) {
    fail(key, *n, kFlopRateForm);
    return false;
  }
  out = *v;
  return true;
}

void MapReader::finish() {
  if (!node_) return;
  for (const auto& [key, value] : node_->map) {
    if (known_.count(key)) continue;
    std::string message = "unknown key";
    std::string best = closest_name(key, known_);
    if (best.empty()) best = key_holding(key, known_);
    if (!best.empty()) {
      message += "; did you mean '" + best + "'?";
    } else if (!known_.empty()) {
      message += "; known keys here: ";
      bool first = true;
      for (const std::string& k : known_) {
        message += (first ? "" : ", ") + k;
        first = false;
      }
    }
    errors_.add(InputError{value.file, value.line, key_path(key), message});
  }
}

}  // namespace clustersim
