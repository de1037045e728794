// SPDX-License-Identifier: Apache-2.0
// The one translation unit that includes yaml-cpp: YAML text -> YamlNode.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <sstream>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/text_file.h"
#include "sim/core/yaml_tree.h"

namespace clustersim {
namespace {

// Limits on the tree once aliases are expanded: an alias that refers to its own anchor makes a
// cycle (endless), and aliases of aliases grow exponentially ("billion laughs": a 400-byte file
// that expands to billions of values). No scenario, sweep or suite comes near either.
constexpr int kMaxDepth = 256;
constexpr int64_t kMaxValues = 500'000;

// What surrounds a --set value without being YAML's to drop: spaces, tabs and line breaks.
constexpr const char* kBlanks = " \t\r\n";

// Tags the reader leaves on untagged values: none, '?' (plain) and '!' (quoted). Any other
// ('!foo 512', '!!str 8') asks for a type the reader does not give: every value is read by its
// key (a custom tag was dropped and '!foo 512' read as 512 until 2026-12-05).
void refuse_tag(const YAML::Node& n, const std::string& origin, int line, const std::string& path) {
  const std::string& tag = n.Tag();
  if (tag.empty() || tag == "?" || tag == "!") return;
  const std::string core = "tag:yaml.org,2002:";
  const std::string shown = tag.starts_with(core) ? "!!" + tag.substr(core.size()) : tag;
  throw BadInput(InputError{origin, line, path,
                            "has the YAML tag '" + shown + "'; clustersim reads every value by its key and takes no "
                                                           "tags: remove it"});
}

struct Budget {
  int depth = 0;
  int64_t values = 0;
  const std::string* text = nullptr;  // what is being read, for the quote check
};

// True when the quoted scalar opening at `pos` of `text` never closes: yaml-cpp then reads to the
// end of the text, so "name: 'abc" followed by the rest of a file became one long name, and
// "--set x='" the empty string. Inside single quotes '' is a quote; inside double quotes a
// backslash escapes the next character.
bool quote_left_open(const std::string& text, size_t pos) {
  if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"')) return false;
  const char q = text[pos];
  for (size_t i = pos + 1; i < text.size(); ++i) {
    if (q == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == q) {
      if (q == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;
        continue;
      }
      return false;
    }
  }
  return true;
}

// Where the value marked at `pos` of `text` starts: yaml-cpp marks a value at its properties, an
// anchor or the tag '!' ("&a 'abc", "! 'abc"; other tags are refused), and the value follows them
// after blanks, line breaks and comments.
size_t value_start(const std::string& text, size_t pos) {
  size_t i = pos;
  while (i < text.size() && (text[i] == '&' || text[i] == '!')) {
    i = text.find_first_of(kBlanks, i);
    while (i < text.size()) {
      if (text[i] == '#') {
        i = text.find('\n', i);
      } else if (std::string_view(kBlanks).find(text[i]) != std::string_view::npos) {
        ++i;
      } else {
        break;
      }
    }
  }
  return i;
}

void refuse_open_quote(const YAML::Node& n, const Budget& b, const std::string& origin, int line,
                       const std::string& path) {
  if (b.text == nullptr || !n.IsScalar() || n.Tag() != "!" || n.Mark().pos < 0) return;
  const size_t pos = value_start(*b.text, static_cast<size_t>(n.Mark().pos));
  if (!quote_left_open(*b.text, pos)) return;
  throw BadInput(InputError{origin, line, path,
                            std::string("opens a quoted value (") + (*b.text)[pos] +
                                ") that never closes; close it on the same value, or remove the quote"});
}

// A control character other than tab and line feed in a value: the text itself holds none
// (first_bad_character), so it came from a double-quoted escape ("\x1b[31m", "\a"), which went
// out raw to the terminal and recoloured it (accepted until 2026-12-07).
void refuse_escaped_control(const std::string& value, const std::string& origin, int line, const std::string& path) {
  for (size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    // C1 controls (U+0080..U+009F but NEL) too: U+009B starts a terminal escape sequence.
    const auto next = i + 1 < value.size() ? static_cast<unsigned char>(value[i + 1]) : 0;
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f || (c == 0xc2 && next >= 0x80 && next <= 0x9f && next != 0x85)) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "holds a control character (byte 0x%02x) from an escape in a double-quoted value; expected printable text", c);
      throw BadInput(InputError{origin, line, path, buf});
    }
  }
}

YamlNode convert(const YAML::Node& in, const std::string& origin, const std::string& path, Budget& budget) {
  const int line = in.Mark().line >= 0 ? in.Mark().line + 1 : 0;
  if (budget.depth >= kMaxDepth) {
    // The path of a cycle repeats itself: its start says where.
    const std::string shown = path.size() > 60 ? path.substr(0, 60) + "..." : path;
    throw BadInput(InputError{origin, line, shown,
                              "nested deeper than " + std::to_string(kMaxDepth) +
                                  " levels (an alias inside its own anchor, '&a [*a]', nests without end)"});
  }
  if (++budget.values > kMaxValues) {
    throw BadInput(InputError{origin, line, path,
                              "holds more than " + std::to_string(kMaxValues) +
                                  " values once its aliases are expanded (aliases of aliases multiply); "
                                  "write the values out or use fewer aliases"});
  }
  struct Deeper {
    Budget& b;
    explicit Deeper(Budget& budget) : b(budget) { ++b.depth; }
    ~Deeper() { --b.depth; }
  } deeper(budget);
  refuse_tag(in, origin, line, path);
  refuse_open_quote(in, budget, origin, line, path);
  YamlNode out;
  out.file = origin;
  out.line = line;
  switch (in.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out.kind = YamlNode::Kind::kNull;
      break;
    case YAML::NodeType::Scalar:
      out.kind = YamlNode::Kind::kScalar;
      out.scalar = in.Scalar();
      refuse_escaped_control(out.scalar, origin, line, path);
      break;
    case YAML::NodeType::Sequence: {
      out.kind = YamlNode::Kind::kSeq;
      int i = 0;
      for (const YAML::Node& item : in) {
        out.seq.push_back(convert(item, origin, path + "[" + std::to_string(i++) + "]", budget));
      }
      break;
    }
    case YAML::NodeType::Map: {
      out.kind = YamlNode::Kind::kMap;
      std::set<std::string> seen;
      for (const auto& kv : in) {
        if (!kv.first.IsScalar()) {
          // A null key ('~: 1', '? : 1') was called a list or mapping until 2026-12-05.
          const bool null_key = kv.first.IsNull() || !kv.first.IsDefined();
          throw BadInput(InputError{origin, kv.first.Mark().line + 1, path,
                                    null_key ? "keys must be plain names; this mapping has an empty key (~ or null)"
                                             : "keys must be plain names; this mapping has a list or mapping as a key"});
        }
        const std::string key = kv.first.Scalar();
        const std::string child_path = path.empty() ? key : path + "." + key;
        refuse_tag(kv.first, origin, kv.first.Mark().line + 1, child_path);
        refuse_open_quote(kv.first, budget, origin, kv.first.Mark().line + 1, child_path);
        if (!seen.insert(key).second) {
          throw BadInput(InputError{origin, kv.first.Mark().line + 1, child_path,
                                    "key appears twice in the same mapping"});
        }
        YamlNode child = convert(kv.second, origin, child_path, budget);
        // yaml-cpp places an empty value or a nested block at the next token; messages about
        // them should point at their key.
        if (!child.is_scalar()) child.line = kv.first.Mark().line + 1;
        out.map.emplace_back(key, std::move(child));
      }
      break;
    }
  }
  return out;
}

// YAML streams are Unicode text (YAML 1.2 section 5.1): the first byte that is not valid UTF-8,
// or a control character other than tab and line breaks, with its 1-based line; 0 when clean.
// (Invalid bytes in a name went out into results.json as invalid JSON; an escape sequence in a
// profile's name recoloured the terminal.)
int first_bad_character(const std::string& text, std::string& what) {
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    // Line breaks: LF, CRLF, and a lone CR (old Mac files, which parse() reads as breaks too).
    if (c == '\n' || (c == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n'))) ++line;
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "a control character (byte 0x%02x)", c);
        what = buf;
        return line;
      }
      ++i;
      continue;
    }
    // Lead byte: 2, 3 or 4 bytes; no overlong forms, surrogates or code points past U+10FFFF.
    const int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool ok = n > 0 && i + static_cast<size_t>(n) <= text.size();
    for (int k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (ok && n >= 3) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0) && !(c == 0xf0 && c1 < 0x90) &&
           !(c == 0xf4 && c1 >= 0x90);
    }
    if (!ok) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "a byte that is not UTF-8 (0x%02x)", c);
      what = buf;
      return line;
    }
    // C1 controls (U+0080..U+009F, but NEL, a YAML line break) are not printable either: U+009B
    // starts a terminal escape sequence.
    if (c == 0xc2) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      if (c1 <= 0x9f && c1 != 0x85) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "a control character (U+%04X)", c1);
        what = buf;
        return line;
      }
    }
    i += static_cast<size_t>(n);
  }
  return 0;
}

// Whether `line` starts or ends a YAML document ('---' or '...' at its start).
bool is_document_marker(const std::string& line) { return line.starts_with("---") || line.starts_with("..."); }

// Where the text's first line of content is indented and a later one is indented less: that
// later line's number and a sentence with its indent and the first's; {0, ""} when the
// indentation is consistent. yaml-cpp reads the less indented line as a second document or a stray value, and
// said so ("holds more than one YAML document" for a file with no '---').
std::pair<int, std::string> first_line_indent_mismatch(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  int first_indent = -1, first_line = 0;
  for (int n = 1; std::getline(lines, line); ++n) {
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line[indent] == '#') continue;
    // Document markers and tab-indented lines are said by the other messages.
    if (is_document_marker(line) || line[indent] == '\t') return {0, ""};
    if (first_indent < 0) {
      first_indent = static_cast<int>(indent);
      first_line = n;
      if (first_indent == 0) return {0, ""};
      continue;
    }
    if (static_cast<int>(indent) < first_indent) {
      return {n, "indented " + std::to_string(indent) + " spaces, less than the first key's " + std::to_string(first_indent) +
                     " on line " + std::to_string(first_line) +
                     ": the first key sets the top level's indentation, and every top-level key must line up with it "
                     "(start the file's keys at the first column)"};
    }
  }
  return {0, ""};
}

// Whether a line of the text is a document marker.
bool has_document_marker(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (is_document_marker(line)) return true;
  }
  return false;
}

YamlNode parse(const std::string& raw, const std::string& origin) {
  std::string bad;
  if (const int line = first_bad_character(raw, bad)) {
    // A binary file (a probe's .pb given to validate, 2026-12-07 review) says what it looks like.
    const bool probe = origin.ends_with(".pb");
    if (probe || raw.find('\0') != std::string::npos) {
      throw BadInput(InputError{origin, line, "", "holds " + bad + ": a binary file; expected UTF-8 text" +
                                                      (probe ? std::string(" (probe data (.pb) is read by 'clustersim calibrate')") : "")});
    }
    throw BadInput(InputError{origin, line, "", "holds " + bad + "; expected UTF-8 text"});
  }
  // yaml-cpp skips a UTF-8 byte order mark without counting it in its marks' positions, which
  // the quote check reads the text at: dropped here, the two agree.
  std::string text = raw.starts_with("\xEF\xBB\xBF") ? raw.substr(3) : raw;
  // Old Mac line ends (a lone CR) are line breaks in YAML; yaml-cpp reads them as one long line.
  if (text.find('\r') != std::string::npos) {
    std::string unix_text;
    unix_text.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\r') {
        unix_text += text[i];
      } else if (i + 1 >= text.size() || text[i + 1] != '\n') {
        unix_text += '\n';
      }
    }
    text = std::move(unix_text);
  }
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    for (size_t i = 1; i < docs.size(); ++i) {
      // A second document ('---') would be dropped without a word.
      if (docs[i].IsNull()) continue;
      // Without a separator yaml-cpp starts a second document at text after a complete value
      // ("'abc'x", as --set gives it), or at a line indented less than the first key.
      if (const auto [at, mismatch] = first_line_indent_mismatch(text); at > 0) {
        throw BadInput(InputError{origin, at, "", "not valid YAML: " + mismatch});
      }
      const bool separated = has_document_marker(text);
      throw BadInput(InputError{origin, docs[i].Mark().line >= 0 ? docs[i].Mark().line + 1 : 0, "",
                                separated ? "holds more than one YAML document (a '---' starts one, a '...' ends one); expected one"
                                          : "holds text after a complete value (a quoted value must be the whole "
                                            "value, as 'abc' or 'abc x'); expected one value"});
    }
    Budget budget;
    budget.text = &text;
    if (docs.empty()) return convert(YAML::Node(), origin, "", budget);
    return convert(docs[0], origin, "", budget);
  } catch (const YAML::Exception& e) {
    // yaml-cpp says only "bad file" when it stops at its nesting limit (about 500 levels).
    std::string why = e.msg == "bad file" ? "nested deeper than the reader allows (about 500 levels)" : e.msg;
    // A tab in the indentation is the usual cause of yaml-cpp's bare "illegal map value" and the
    // like: say so where the failing line, or the one before it, starts with one.
    if (e.mark.line >= 0) {
      std::istringstream lines(text);
      std::string line;
      for (int n = 0; std::getline(lines, line) && n <= e.mark.line; ++n) {
        const size_t indent = line.find_first_not_of(' ');
        if (n + 1 >= e.mark.line && indent != std::string::npos && line[indent] == '\t') {
          why += " (line " + std::to_string(n + 1) + " is indented with a tab: YAML indents with spaces)";
          break;
        }
      }
    }
    if (const auto [at, mismatch] = first_line_indent_mismatch(text); at > 0) {
      throw BadInput(InputError{origin, at, "", "not valid YAML: " + mismatch});
    }
    throw BadInput(InputError{origin, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "not valid YAML: " + why});
  }
}

}  // namespace

const YamlNode* YamlNode::find(const std::string& key) const {
  for (const auto& [k, v] : map) {
    if (k == key) return &v;
  }
  return nullptr;
}

YamlNode* YamlNode::find(const std::string& key) {
  for (auto& [k, v] : map) {
    if (k == key) return &v;
  }
  return nullptr;
}

YamlNode parse_yaml_file(const std::string& path) {
  return parse(read_text_file(path, kMaxYamlBytes, "a YAML file (a scenario, sweep, suite or profile)"), path);
}

YamlNode parse_yaml_text(const std::string& text, const std::string& origin) {
  return parse(text, origin);
}

const YamlNode* find_path(const YamlNode& root, const std::string& path) {
  const YamlNode* node = &root;
  size_t start = 0;
  while (node && node->is_map()) {
    const size_t dot = path.find('.', start);
    node = node->find(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
  return nullptr;
}

bool remove_path(YamlNode& root, const std::string& path) {
  YamlNode* parent = &root;
  size_t start = 0;
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
    if (parent->is_null()) return true;  // nothing below: nothing to remove
    if (!parent->is_map()) return false;
    parent = parent->find(path.substr(start, dot - start));
    if (!parent) return true;
    start = dot + 1;
  }
  if (parent->is_null()) return true;
  if (!parent->is_map()) return false;
  const std::string leaf = path.substr(start);
  if (std::erase_if(parent->map, [&](const auto& kv) { return kv.first == leaf; }) > 0) parent->removed.push_back(leaf);
  return true;
}

void apply_override(YamlNode& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw BadInput(InputError{"--set", 0, "", "expected key.path=value, got '" + assignment + "'"});
  }
  const std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  if (path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos) {
    throw BadInput(InputError{"--set", 0, path, "empty key in the path"});
  }
  if (const size_t bracket = path.find('['); bracket != std::string::npos) {
    // Lists are given whole: an index would have been an unknown key, unexplained.
    throw BadInput(InputError{"--set", 0, path,
                              "--set takes a key path of mappings, not a list index; give the list whole, e.g. " +
                                  path.substr(0, bracket) + "='[{...}, {...}]'"});
  }
  if (value.find_first_not_of(kBlanks) == std::string::npos) {
    // As a key without a value in a file; an unset shell variable ('x=$BW') must not quietly
    // become the default.
    throw BadInput(InputError{"--set", 0, path, "has no value; write " + path + "=null to remove the key (its default applies)"});
  }
  // The text after '=' is the value: YAML would drop a comment ('#' at the start or after a blank,
  // outside quotes) and fold a line break, and the run would take what is left without a word
  // (until 2026-12-06 'model.name=GPT #2' ran as GPT, and 'parallelism.tp=4 #x' as 4).
  // (A line break around the value stays in it, as a space does, for the readers to refuse.)
  const size_t lead = value.find_first_not_of(kBlanks), tail = value.find_last_not_of(kBlanks);
  if (value.substr(lead, tail - lead + 1).find_first_of("\r\n") != std::string::npos) {
    throw BadInput(InputError{"--set", 0, path, "the value holds a line break, which YAML would fold; give it on one line"});
  }
  // A quote opens a scalar only at its start (the value's, or after '[', '{', ',' or ':' and
  // blanks): "it's #2" is a plain scalar whose comment YAML would drop. Inside double quotes a
  // backslash escapes the next character; inside single quotes '' is one quote.
  char quote = 0;
  const auto opens_scalar = [&value, lead](size_t i) {
    if (i == lead) return true;
    size_t j = i;
    while (j > 0 && (value[j - 1] == ' ' || value[j - 1] == '\t')) --j;
    return j > 0 && std::string_view("[{,:").find(value[j - 1]) != std::string_view::npos;
  };
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (quote == '"') {
      if (c == '\\') ++i;
      else if (c == '"') quote = 0;
    } else if (quote == '\'') {
      if (c == '\'' && i + 1 < value.size() && value[i + 1] == '\'') ++i;
      else if (c == '\'') quote = 0;
    } else if ((c == '\'' || c == '"') && opens_scalar(i)) {
      quote = c;
    } else if (c == '#' && i > lead && (value[i - 1] == ' ' || value[i - 1] == '\t')) {
      // (A value that is all comment holds none: refused below as such.)
      throw BadInput(InputError{"--set", 0, path,
                                "the value holds a YAML comment ('#' after a blank), which would be dropped: remove "
                                "it, or quote the value to keep the '#' (" + path + "='\"a #b\"')"});
    }
  }
  YamlNode parsed = parse(value, "--set " + path);
  if (parsed.is_null()) {
    // Only YAML's own null words remove the key: an anchor or tag with nothing after it ('x=&a',
    // 'x=!') read as null and removed it without a word, where 'x=' is refused.
    const size_t first = value.find_first_not_of(kBlanks);
    const std::string word = value.substr(first, value.find_last_not_of(kBlanks) - first + 1);
    if (word != "null" && word != "Null" && word != "NULL" && word != "~") {
      throw BadInput(InputError{"--set", 0, path,
                                "has no value ('" + word + "' holds none); write " + path +
                                    "=null to remove the key (its default applies)"});
    }
    // 'key=null' (or 'key=~') removes the key: its default applies, or a required key is
    // reported missing. Nothing is created on the way (an empty section would change the kind of
    // run), and a key that is not there is already removed.
    if (!remove_path(root, path)) {
      throw BadInput(InputError{"--set", 0, path, "cannot remove a key inside a value that is not a mapping"});
    }
    return;
  }
  if (root.is_null()) root.kind = YamlNode::Kind::kMap;
  YamlNode* node = &root;
  std::string walked;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    walked = walked.empty() ? key : walked + "." + key;
    if (node->is_null()) node->kind = YamlNode::Kind::kMap;
    if (!node->is_map()) {
      throw BadInput(InputError{"--set", 0, walked, "cannot set a key inside a value that is not a mapping"});
    }
    YamlNode* child = node->find(key);
    if (!child) {
      node->map.emplace_back(key, YamlNode{});
      child = &node->map.back().second;
      child->file = "--set";
    }
    node = child;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  // Spaces around a value are YAML syntax in a file (`tp: 8`), but after --set's '=' they are
  // typed into the value: kept, so that 'tp= 4' and 'tp=4 ' are refused as a number, as a quoted
  // ' 4' in a file is (parsed as YAML they were dropped, and ran with tp 4, until 2026-12-05; line
  // breaks, 'tp=4<newline>', until later that day).
  if (parsed.is_scalar()) {
    const size_t first = value.find_first_not_of(kBlanks);
    const size_t last = value.find_last_not_of(kBlanks);
    parsed.scalar = value.substr(0, first) + parsed.scalar + value.substr(last + 1);
  }
  parsed.file = "--set";
  parsed.line = 0;
  *node = std::move(parsed);
}

}  // namespace clustersim
