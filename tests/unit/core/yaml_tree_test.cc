// SPDX-License-Identifier: Apache-2.0
// The YAML tree: kinds, order and lines of nodes; parse errors with lines; duplicate keys;
// "--set key.path=value" overrides.
#include "sim/core/yaml_tree.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>

#include <initializer_list>
#include <string>
#include <utility>

#include "sim/core/error.h"

namespace clustersim {
namespace {

// The single error of a BadInput thrown by `f`.
template <typename F>
InputError only_error(F&& f) {
  try {
    f();
  } catch (const BadInput& e) {
    EXPECT_EQ(e.errors().size(), 1u) << e.what();
    return e.errors().empty() ? InputError{} : e.errors().front();
  }
  ADD_FAILURE() << "expected BadInput";
  return {};
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Each key of `root` holds the scalar given.
void expect_scalars(const YamlNode& root, std::initializer_list<std::pair<const char*, const char*>> want) {
  for (const auto& [key, value] : want) {
    const YamlNode* n = root.find(key);
    ASSERT_NE(n, nullptr) << key;
    EXPECT_EQ(n->scalar, value) << key;
  }
}

TEST(ParseYamlText, KindsOrderAndLines) {
  const YamlNode n = parse_yaml_text(
      "zeta: 1\n"          // line 1
      "alpha:\n"           // line 2
      "  c: x\n"           // line 3
      "  d: [1, 2]\n"      // line 4
      "e: ~\n",            // line 5
      "t.yaml");
  ASSERT_TRUE(n.is_map());
  ASSERT_EQ(n.map.size(), 3u);
  // File order, not sorted.
  EXPECT_EQ(n.map[0].first, "zeta");
  EXPECT_EQ(n.map[1].first, "alpha");
  EXPECT_EQ(n.map[2].first, "e");
  EXPECT_TRUE(n.find("zeta")->is_scalar());
  EXPECT_EQ(n.find("zeta")->scalar, "1");
  EXPECT_EQ(n.find("zeta")->line, 1);
  EXPECT_EQ(n.find("zeta")->file, "t.yaml");
  // A block mapping carries its key's line, so messages about a section point at its name.
  EXPECT_TRUE(n.find("alpha")->is_map());
  EXPECT_EQ(n.find("alpha")->line, 2);
  EXPECT_EQ(n.find("alpha")->find("c")->line, 3);
  const YamlNode* d = n.find("alpha")->find("d");
  ASSERT_TRUE(d->is_seq());
  ASSERT_EQ(d->seq.size(), 2u);
  EXPECT_EQ(d->seq[1].scalar, "2");
  EXPECT_EQ(d->line, 4);
  EXPECT_TRUE(n.find("e")->is_null());
  EXPECT_EQ(n.find("missing"), nullptr);
}

TEST(ParseYamlText, EmptyTextIsNullAndPlainTextIsAScalar) {
  EXPECT_TRUE(parse_yaml_text("", "t.yaml").is_null());
  const YamlNode s = parse_yaml_text("hello world", "t.yaml");
  EXPECT_TRUE(s.is_scalar());
  EXPECT_EQ(s.scalar, "hello world");
}

// Names go out into results.json and the terminal: text that is not UTF-8, or holds control
// characters, is refused with its line (invalid bytes made invalid JSON; ESC sequences recoloured
// the terminal). Multi-byte UTF-8, tabs in values and CRLF line ends stay fine.
TEST(ParseYamlText, TextThatIsNotUtf8OrHoldsControlCharactersIsRefused) {
  struct Case {
    std::string text;
    int line;
    const char* what;
  };
  for (const Case& c : {Case{"a: 1\nname: a\xff\xfe" "b\n", 2, "not UTF-8 (0xff)"},
                        Case{"name: \xc0\xaf\n", 1, "not UTF-8 (0xc0)"},         // overlong '/'
                        Case{"name: \xed\xa0\x80\n", 1, "not UTF-8 (0xed)"},     // a surrogate
                        Case{"a: 1\nb: 2\nname: \xe2\x82\n", 3, "not UTF-8"},  // cut short
                        Case{"name: \x1b[31mred\n", 1, "control character (byte 0x1b)"},
                        Case{std::string("name: a\0b\n", 10), 1, "control character (byte 0x00)"},
                        Case{"name: \xc2\x9b" "31m\n", 1, "control character (U+009B)"},  // C1 CSI
                        Case{"a: 1\rb: 2\rname: \xff\r", 3, "not UTF-8"}}) {  // lone CR line ends
    const InputError e = only_error([&] { parse_yaml_text(c.text, "bad.yaml"); });
    EXPECT_EQ(e.line, c.line) << c.text;
    EXPECT_TRUE(contains(e.message, c.what)) << e.message;
    EXPECT_TRUE(contains(e.message, "expected UTF-8 text")) << e.message;
  }
  EXPECT_EQ(parse_yaml_text("name: \xc3\xa9t\xc3\xa9 \xe2\x80\x93 \xf0\x9f\x9a\x80\r\nb: \"x\ty\"\n", "ok.yaml")
                .find("name")->scalar,
            "\xc3\xa9t\xc3\xa9 \xe2\x80\x93 \xf0\x9f\x9a\x80");
}

TEST(ParseYamlText, SyntaxErrorsCarryFileAndLine) {
  struct Case {
    const char* text;
    int line;
  };
  for (const Case& c : {Case{"a: 1\nb: [1, 2\nc: 3\n", 3},   // unclosed flow sequence, seen at line 3
                        Case{"a: 1\nb: 2\n  c: 3\n", 3},      // indented key under a scalar
                        Case{"a: 1\n\tb: 2\n", 2},             // tab indentation
                        Case{"a: 1\nb: 2\nc: @x\n", 3}}) {     // reserved indicator
    const InputError e = only_error([&] { parse_yaml_text(c.text, "bad.yaml"); });
    EXPECT_EQ(e.file, "bad.yaml") << c.text;
    EXPECT_EQ(e.line, c.line) << c.text;
    EXPECT_TRUE(contains(e.message, "not valid YAML")) << e.message;
    EXPECT_TRUE(contains(e.to_string(), "bad.yaml:" + std::to_string(c.line) + ": ")) << e.to_string();
    // A tab in the indentation is named (yaml-cpp said "illegal map value" alone until 2026-12-06).
    EXPECT_EQ(contains(e.message, "indented with a tab"), contains(c.text, "\t")) << e.message;
  }
}

// A first key indented further than a later one is said as such: yaml-cpp read the later line
// as a second document ("holds more than one YAML document" for a file with no '---') or a stray
// value, until 2026-12-07.
TEST(ParseYamlText, AnIndentedFirstKeyIsSaid) {
  for (const char* text : {"  a: 1\n# x\nname: y\n", "  a: 1\n  b: 2\nc: 3\n"}) {
    const InputError e = only_error([&] { parse_yaml_text(text, "bad.yaml"); });
    EXPECT_EQ(e.line, 3) << text;
    EXPECT_TRUE(contains(e.message, "less than the first key's 2 on line 1")) << e.message;
  }
  EXPECT_EQ(parse_yaml_text("  a: 1\n  b: 2\n", "ok.yaml").find("b")->scalar, "2");  // consistent: fine
}

// Escapes in double-quoted values that make control characters (the text itself holds none) are
// refused with the key: they went out raw to the terminal (accepted until 2026-12-07).
TEST(ParseYamlText, EscapedControlCharactersAreRefused) {
  for (const char* text : {"name: \"a\\x1b[31mred\"\n", "name: \"beep\\a\"\n", "x:\n  name: \"\\u009b31m\"\n"}) {
    const InputError e = only_error([&] { parse_yaml_text(text, "bad.yaml"); });
    EXPECT_TRUE(contains(e.message, "control character")) << e.message;
    EXPECT_TRUE(contains(e.key_path, "name")) << e.key_path;
  }
  EXPECT_EQ(parse_yaml_text("name: \"tab\\there\"\n", "ok.yaml").find("name")->scalar, "tab\there");
}

TEST(ParseYamlText, DuplicateKeysAreRejectedWithPathAndLine) {
  const InputError top = only_error([] { parse_yaml_text("a: 1\nb: 2\na: 3\n", "d.yaml"); });
  EXPECT_EQ(top.key_path, "a");
  EXPECT_EQ(top.line, 3);
  EXPECT_TRUE(contains(top.message, "twice"));

  const InputError nested = only_error([] { parse_yaml_text("x:\n  y: 1\n  z: 2\n  y: 3\n", "d.yaml"); });
  EXPECT_EQ(nested.key_path, "x.y");
  EXPECT_EQ(nested.line, 4);

  // The same key in two different mappings is fine.
  EXPECT_NO_THROW(parse_yaml_text("a: {k: 1}\nb: {k: 2}\n", "d.yaml"));
}

TEST(ParseYamlText, EmptyValueIsOnTheKeysLine) {
  const YamlNode n = parse_yaml_text("a:\nb: 1\nd:\n\ne: 2\n", "t.yaml");
  EXPECT_EQ(n.find("a")->line, 1);
  EXPECT_EQ(n.find("d")->line, 3);
}

TEST(ParseYamlFile, MissingFileIsNamed) {
  const InputError e = only_error([] { parse_yaml_file("/nonexistent/clustersim/none.yaml"); });
  EXPECT_EQ(e.file, "/nonexistent/clustersim/none.yaml");
  EXPECT_TRUE(contains(e.message, "cannot open"));
}

TEST(ParseYamlFile, DirectoryIsNamed) {
  const std::string dir = CLUSTERSIM_SOURCE_DIR "/scenarios";
  const InputError e = only_error([&] { parse_yaml_file(dir); });
  EXPECT_EQ(e.file, dir);
  EXPECT_TRUE(contains(e.message, "is a directory")) << e.message;
}

TEST(ApplyOverride, ReplacesAnExistingLeaf) {
  YamlNode root = parse_yaml_text("parallelism:\n  tp: 8\n  pp: 2\n", "s.yaml");
  apply_override(root, "parallelism.tp=4");
  const YamlNode* tp = root.find("parallelism")->find("tp");
  EXPECT_EQ(tp->scalar, "4");
  EXPECT_EQ(tp->file, "--set");
  EXPECT_EQ(tp->line, 0);
  // Order and siblings are kept.
  EXPECT_EQ(root.find("parallelism")->map[0].first, "tp");
  EXPECT_EQ(root.find("parallelism")->find("pp")->scalar, "2");
}

TEST(ApplyOverride, CreatesMissingMaps) {
  YamlNode root = parse_yaml_text("a: 1\n", "s.yaml");
  apply_override(root, "training.overlap.tp_comm=true");
  const YamlNode* training = root.find("training");
  ASSERT_NE(training, nullptr);
  ASSERT_TRUE(training->is_map());
  ASSERT_TRUE(training->find("overlap")->is_map());
  EXPECT_EQ(training->find("overlap")->find("tp_comm")->scalar, "true");

  YamlNode empty;  // a null document becomes a mapping
  apply_override(empty, "x=1");
  EXPECT_TRUE(empty.is_map());
  EXPECT_EQ(empty.find("x")->scalar, "1");
}

TEST(ApplyOverride, ValuesAreParsedAsYaml) {
  YamlNode root = parse_yaml_text("a: 1\n", "s.yaml");
  apply_override(root, "list=[1, 2, 3]");
  ASSERT_TRUE(root.find("list")->is_seq());
  EXPECT_EQ(root.find("list")->seq.size(), 3u);
  apply_override(root, "map={p: 1, q: 2}");
  ASSERT_TRUE(root.find("map")->is_map());
  EXPECT_EQ(root.find("map")->find("q")->scalar, "2");
  apply_override(root, "bw=400Gbps");
  EXPECT_EQ(root.find("bw")->scalar, "400Gbps");
  // Only the first '=' separates path from value.
  apply_override(root, "name=a=b");
  EXPECT_EQ(root.find("name")->scalar, "a=b");
  // A mapping can replace a scalar leaf and the other way round.
  apply_override(root, "a={inner: 3}");
  EXPECT_TRUE(root.find("a")->is_map());
}

// Spaces after '=' (or at the end) are typed into the value, not YAML syntax as in a file: a
// single value keeps them, so number readers refuse ' 4' (it became 4 until 2026-12-05); lists
// and mappings are YAML as before.
TEST(ApplyOverride, SpacesAroundASingleValueStayInIt) {
  YamlNode root = parse_yaml_text("parallelism:\n  tp: 8\n", "s.yaml");
  apply_override(root, "parallelism.tp= 4");
  EXPECT_EQ(root.find("parallelism")->find("tp")->scalar, " 4");
  apply_override(root, "parallelism.tp=4 ");
  EXPECT_EQ(root.find("parallelism")->find("tp")->scalar, "4 ");
  apply_override(root, "parallelism.tp=\t\"4\" ");
  EXPECT_EQ(root.find("parallelism")->find("tp")->scalar, "\t4 ");
  apply_override(root, "parallelism.tp=4");
  EXPECT_EQ(root.find("parallelism")->find("tp")->scalar, "4");
  apply_override(root, "list= [1, 2] ");
  ASSERT_TRUE(root.find("list")->is_seq());
  EXPECT_EQ(root.find("list")->seq[1].scalar, "2");
  // Spaces around null still remove the key.
  apply_override(root, "parallelism.tp= null ");
  EXPECT_EQ(root.find("parallelism")->find("tp"), nullptr);
}

// A line break around a value is typed into it as a space is ('tp=4<newline>' ran with tp 4, and
// 'tp=<newline>' removed the key, until 2026-12-05, while 'tp=4 ' was refused).
TEST(ApplyOverride, LineBreaksAroundAValueStayInItAsSpacesDo) {
  YamlNode root = parse_yaml_text("parallelism:\n  tp: 8\n", "s.yaml");
  apply_override(root, "parallelism.tp=4\n");
  EXPECT_EQ(root.find("parallelism")->find("tp")->scalar, "4\n");
  apply_override(root, "parallelism.tp=\r\n4");
  EXPECT_EQ(root.find("parallelism")->find("tp")->scalar, "\r\n4");
  const InputError empty = only_error([&] { apply_override(root, "parallelism.tp=\n"); });
  EXPECT_TRUE(contains(empty.message, "has no value")) << empty.message;
  ASSERT_NE(root.find("parallelism")->find("tp"), nullptr);
}

// The text after '=' is the value: a YAML comment or a line break inside it would be dropped or
// folded, and is refused ('model.name=GPT #2' ran as GPT, 'name=x<newline>y' as "x y", and
// 'parallelism.tp=4 #x' as 4, until 2026-12-06). Quoted, or without a blank before it, '#' stays.
TEST(ApplyOverride, ACommentOrALineBreakInsideTheValueIsRefused) {
  YamlNode root = parse_yaml_text("model:\n  name: a\nparallelism:\n  tp: 8\n", "s.yaml");
  for (const char* bad : {"model.name=GPT #2", "parallelism.tp=4 #x", "model.name=x\ny", "model.name=it's #2"}) {
    const InputError e = only_error([&] { apply_override(root, bad); });
    EXPECT_EQ(e.file, "--set") << bad;
    EXPECT_TRUE(contains(e.message, "comment") || contains(e.message, "line break")) << bad << ": " << e.message;
  }
  apply_override(root, "model.name=\"GPT #2\"");
  EXPECT_EQ(root.find("model")->find("name")->scalar, "GPT #2");
  apply_override(root, "model.name=GPT#2");
  EXPECT_EQ(root.find("model")->find("name")->scalar, "GPT#2");
  // Escaped and doubled quotes stay inside their scalar.
  apply_override(root, "model.name=\"a\\\" #b\"");
  EXPECT_EQ(root.find("model")->find("name")->scalar, "a\" #b");
  apply_override(root, "model.name='it''s #2'");
  EXPECT_EQ(root.find("model")->find("name")->scalar, "it's #2");
}

TEST(ApplyOverride, RejectsBadAssignments) {
  YamlNode root = parse_yaml_text("cluster:\n  gpus: 8\n", "s.yaml");
  const InputError no_eq = only_error([&] { apply_override(root, "cluster.gpus"); });
  EXPECT_EQ(no_eq.file, "--set");
  EXPECT_TRUE(contains(no_eq.message, "key.path=value"));
  EXPECT_TRUE(contains(no_eq.message, "cluster.gpus"));

  const InputError no_key = only_error([&] { apply_override(root, "=4"); });
  EXPECT_TRUE(contains(no_key.message, "key.path=value"));

  const InputError empty_key = only_error([&] { apply_override(root, "cluster..gpus=4"); });
  EXPECT_EQ(empty_key.key_path, "cluster..gpus");
  EXPECT_TRUE(contains(empty_key.message, "empty key"));

  // cluster.gpus is a scalar: nothing can be set inside it.
  const InputError through_scalar = only_error([&] { apply_override(root, "cluster.gpus.x=4"); });
  EXPECT_EQ(through_scalar.key_path, "cluster.gpus.x");
  EXPECT_TRUE(contains(through_scalar.message, "not a mapping"));

  const InputError bad_yaml = only_error([&] { apply_override(root, "cluster.gpus=[1, 2"); });
  EXPECT_TRUE(contains(bad_yaml.message, "not valid YAML"));
  EXPECT_TRUE(contains(bad_yaml.file, "cluster.gpus"));
}

TEST(ParseYamlText, RefusesASecondDocumentAndComplexKeys) {
  const InputError two = only_error([] { parse_yaml_text("a: 1\n---\nb: 2\n", "t.yaml"); });
  EXPECT_EQ(two.file, "t.yaml");
  EXPECT_TRUE(contains(two.message, "more than one YAML document")) << two.message;
  EXPECT_NO_THROW(parse_yaml_text("---\na: 1\n", "t.yaml"));  // one document, marked
  // A document ended by '...' and followed by more text: the message names the end marker too.
  const InputError ended = only_error([] { parse_yaml_text("a: 1\n...\nb: 2\n", "t.yaml"); });
  EXPECT_TRUE(contains(ended.message, "'...' ends one")) << ended.message;
  EXPECT_EQ(ended.line, 3);
  const InputError key = only_error([] { parse_yaml_text("? [1, 2]\n: x\n", "t.yaml"); });
  EXPECT_TRUE(contains(key.message, "keys must be plain names")) << key.message;
  // A null key is named as one, not as a list or mapping.
  for (const char* text : {"a: 1\n~: x\n", "a: 1\nnull: x\n"}) {
    const InputError null_key = only_error([&] { parse_yaml_text(text, "t.yaml"); });
    EXPECT_TRUE(contains(null_key.message, "an empty key (~ or null)")) << text << ": " << null_key.message;
    EXPECT_EQ(null_key.line, 2) << text;
  }
}

// A tag asks for a type the reader does not give (every value is read by its key): refused with
// the key and line. A custom one was dropped ('shift: !foo 512' ran as 512) until 2026-12-05.
TEST(ParseYamlText, TagsAreRefusedWithTheirKey) {
  const InputError custom = only_error([] { parse_yaml_text("traffic:\n  shift: !foo 512\n", "t.yaml"); });
  EXPECT_EQ(custom.line, 2);
  EXPECT_EQ(custom.key_path, "traffic.shift");
  EXPECT_TRUE(contains(custom.message, "has the YAML tag '!foo'")) << custom.message;
  EXPECT_EQ(only_error([] { parse_yaml_text("a: !!str 8\n", "t.yaml"); }).message.find("'!!str'") != std::string::npos,
            true);
  EXPECT_EQ(only_error([] { parse_yaml_text("a: [1, !bar x]\n", "t.yaml"); }).key_path, "a[1]");
  EXPECT_EQ(only_error([] { parse_yaml_text("a: !!map {b: 1}\n", "t.yaml"); }).key_path, "a");
  EXPECT_EQ(only_error([] { parse_yaml_text("!k a: 1\n", "t.yaml"); }).key_path, "a");
  EXPECT_TRUE(contains(only_error([] {
                         YamlNode root = parse_yaml_text("a: 1\n", "t.yaml");
                         apply_override(root, "a=!foo 2");
                       }).message,
                       "'!foo'"));
  // Quoted and plain values carry no tag of their own.
  EXPECT_NO_THROW(parse_yaml_text("a: '!foo'\nb: \"x\"\nc: 3\nd: [1, {e: f}]\n", "t.yaml"));
}

// A quote that never closes is refused with its key and line: yaml-cpp reads it to the end of the
// text, so "name: 'abc" swallowed the rest of the file into the name, and "--set x='" set x to
// the empty string (until 2026-12-05).
TEST(ParseYamlText, AQuoteThatNeverClosesIsRefused) {
  const InputError file = only_error([] { parse_yaml_text("a: 1\nname: 'abc\ncluster: {gpus: 8}\n", "t.yaml"); });
  EXPECT_EQ(file.line, 2);
  EXPECT_EQ(file.key_path, "name");
  EXPECT_TRUE(contains(file.message, "opens a quoted value (') that never closes")) << file.message;
  EXPECT_FALSE(only_error([] { parse_yaml_text("a: [1, \"x]\n", "t.yaml"); }).message.empty());  // yaml-cpp's own
  EXPECT_EQ(only_error([] { parse_yaml_text("'k: 1\n", "t.yaml"); }).line, 1);
  const InputError set = only_error([] {
    YamlNode root = parse_yaml_text("a: 1\n", "t.yaml");
    apply_override(root, "a='");
  });
  EXPECT_TRUE(contains(set.message, "never closes")) << set.message;
  // Text after a closed quote is not a second document (it was called one until 2026-12-05).
  const InputError after = only_error([] {
    YamlNode root = parse_yaml_text("a: 1\n", "t.yaml");
    apply_override(root, "a='abc'x");
  });
  EXPECT_TRUE(contains(after.message, "holds text after a complete value")) << after.message;
  // Closed quotes, escaped quotes inside them, quotes over several lines and apostrophes inside
  // plain values are fine.
  const YamlNode ok = parse_yaml_text(
      "a: 'it''s'\nb: \"say \\\"hi\\\"\"\nc: 'two\n  lines'\nd: don't\ne: ''\nf: \"\"\n", "t.yaml");
  expect_scalars(ok, {{"a", "it's"}, {"b", "say \"hi\""}, {"c", "two lines"}, {"d", "don't"}, {"e", ""}});
}

// An anchor or a '!' tag before the quote hid it: yaml-cpp marks the value at them, so
// "name: &n 'abc" still swallowed the rest of the file (until 2026-12-05).
TEST(ParseYamlText, AQuoteThatNeverClosesIsRefusedAfterAnAnchor) {
  const InputError e = only_error([] { parse_yaml_text("a: 1\nname: &n 'abc\ncluster: {gpus: 8}\n", "t.yaml"); });
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.key_path, "name");
  EXPECT_TRUE(contains(e.message, "opens a quoted value (') that never closes")) << e.message;
  EXPECT_TRUE(contains(only_error([] { parse_yaml_text("a: &n # note\n  \"abc\nb: 2\n", "t.yaml"); }).message,
                       "never closes"));
  EXPECT_TRUE(contains(only_error([] { parse_yaml_text("a: ! 'abc\nb: 2\n", "t.yaml"); }).message, "never closes"));
  EXPECT_TRUE(contains(only_error([] { parse_yaml_text("a: &n ! 'abc\nb: 2\n", "t.yaml"); }).message, "never closes"));
  // Anchored values that close, and their aliases, are fine.
  const YamlNode ok =
      parse_yaml_text("a: &n 'it''s'\nb: *n\nc: &m\n  \"x\"\nd: &p plain\ne: ! 'y'\n", "t.yaml");
  expect_scalars(ok, {{"a", "it's"}, {"b", "it's"}, {"c", "x"}, {"d", "plain"}, {"e", "y"}});
}

// yaml-cpp's positions do not count a byte order mark: the quote check read the text three bytes
// early, so after a BOM a valid list ['a', "b"] was refused as a quote that never closes, and
// "name: 'abc" passed (until 2026-12-05).
TEST(ParseYamlText, TheQuoteCheckReadsAFileWithAByteOrderMark) {
  const std::string bom = "\xEF\xBB\xBF";
  const YamlNode ok = parse_yaml_text(bom + "a: ['x', \"y\"]\nb: 1\n", "t.yaml");
  ASSERT_NE(ok.find("a"), nullptr);
  EXPECT_EQ(ok.find("a")->seq.at(1).scalar, "y");
  const InputError e = only_error([&] { parse_yaml_text(bom + "a: 1\nname: 'abc\ncluster: {gpus: 8}\n", "t.yaml"); });
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.key_path, "name");
  EXPECT_TRUE(contains(e.message, "never closes")) << e.message;
}

TEST(ParseYamlText, TooDeepANestingSaysSo) {
  const InputError e = only_error([] { parse_yaml_text("a: " + std::string(2000, '[') + std::string(2000, ']'), "t.yaml"); });
  EXPECT_TRUE(contains(e.message, "nested deeper than the reader allows")) << e.message;
}

TEST(ParseYamlText, AliasCyclesAndAliasBombsAreRefused) {
  // An alias inside its own anchor nests without end (it crashed the reader before 2026-11-22).
  const InputError cycle = only_error([] { parse_yaml_text("a: &a [*a]\n", "t.yaml"); });
  EXPECT_EQ(cycle.file, "t.yaml");
  EXPECT_EQ(cycle.key_path.rfind("a[0][0]", 0), 0u) << cycle.key_path;
  EXPECT_TRUE(contains(cycle.message, "nested deeper than 256 levels")) << cycle.message;
  // Nine aliases of nine, eight times over: 43 million values from a few hundred bytes (it hung).
  std::string bomb = "l0: &l0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 8; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    bomb += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 9; ++k) bomb += ", " + prev;
    bomb += "]\n";
  }
  const InputError laughs = only_error([&bomb] { parse_yaml_text(bomb, "t.yaml"); });
  EXPECT_TRUE(contains(laughs.message, "more than 500000 values once its aliases are expanded")) << laughs.message;
  // Aliases in moderation are fine.
  const YamlNode ok = parse_yaml_text("a: &a {x: 1}\nb: *a\n", "t.yaml");
  EXPECT_EQ(ok.find("b")->find("x")->scalar, "1");
}

TEST(ParseYamlFile, RefusesFilesOverTheLimit) {
  // /dev/zero never ends: reading stops at the limit with a message.
  const InputError e = only_error([] { parse_yaml_file("/dev/zero"); });
  EXPECT_EQ(e.file, "/dev/zero");
  EXPECT_TRUE(contains(e.message, "larger than 16 MiB")) << e.message;
}

// A named pipe nobody writes to reads as empty at once (it blocked the run until 2026-12-06); a
// pipe with a writer (process substitution) is read whole.
TEST(ParseYamlFile, APipeWithoutAWriterDoesNotBlock) {
  const std::string fifo = ::testing::TempDir() + "/clustersim_no_writer.yaml";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Read at once, and said to be a pipe nothing was written to (since 2026-12-07; before, an
  // empty document, which the scenario loader called "empty").
  const InputError e = only_error([&] { parse_yaml_file(fifo); });
  EXPECT_TRUE(contains(e.message, "is a named pipe with nothing written to it yet")) << e.message;
  std::remove(fifo.c_str());
}

TEST(ApplyOverride, NullRemovesTheKey) {
  YamlNode root = parse_yaml_text("model:\n  layers: 4\n  moe:\n    experts: 8\n", "t.yaml");
  apply_override(root, "model.moe=null");
  ASSERT_NE(root.find("model"), nullptr);
  EXPECT_EQ(root.find("model")->find("moe"), nullptr);
  EXPECT_NE(root.find("model")->find("layers"), nullptr);
  apply_override(root, "model.layers=~");
  EXPECT_EQ(root.find("model")->find("layers"), nullptr);
  // An empty value is refused, not taken for a removal ('--set x=$UNSET_VARIABLE' would silently
  // run on the default), as a key without a value is in a file.
  const InputError empty = only_error([&root] { apply_override(root, "model.hidden= "); });
  EXPECT_EQ(empty.key_path, "model.hidden");
  EXPECT_TRUE(contains(empty.message, "no value")) << empty.message;
  // So is an anchor or tag with nothing after it, which YAML reads as null (it removed the key
  // until 2026-12-05); only YAML's null words remove it.
  for (const char* bare : {"model.hidden=&a", "model.hidden=!", "model.hidden=# set later"}) {
    EXPECT_TRUE(contains(only_error([&root, bare] { apply_override(root, bare); }).message, "has no value")) << bare;
  }
  apply_override(root, "model.hidden=NULL");
  // Nothing is created on the way: an empty 'faults:' or 'inference:' would change the kind of run.
  apply_override(root, "faults.checkpoint.interval=null");
  EXPECT_EQ(root.find("faults"), nullptr);
  YamlNode scalar = parse_yaml_text("a: 1\n", "t.yaml");
  const InputError list = only_error([&scalar] { apply_override(scalar, "a.b=null"); });
  EXPECT_TRUE(contains(list.message, "not a mapping")) << list.message;
}

TEST(ParseYamlText, LoneCarriageReturnsEndLines) {
  const YamlNode n = parse_yaml_text("a: 1\rb:\r  c: 2\r", "t.yaml");
  ASSERT_NE(n.find("b"), nullptr);
  EXPECT_EQ(n.find("b")->find("c")->scalar, "2");
  EXPECT_EQ(n.find("b")->line, 2);
}

}  // namespace
}  // namespace clustersim
