// SPDX-License-Identifier: Apache-2.0
// Strict typed reads of one mapping: types, ranges, required keys, unknown keys with
// suggestions, and the file/line/key path carried by every error.
#include "sim/core/map_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/core/unit_parse.h"
#include "tests/unit/core/unit_printers.h"

namespace clustersim {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A document and an error list that outlive the readers made from them.
struct Doc {
  explicit Doc(const std::string& text) : root(parse_yaml_text(text, "m.yaml")) {}
  MapReader reader(const std::string& path = "sec") { return MapReader(&root, path, errors); }
  const InputError& error(size_t i = 0) const { return errors.errors().at(i); }
  size_t count() const { return errors.errors().size(); }
  YamlNode root;
  ErrorList errors;
};

TEST(MapReaderInt, ReadsAndRejects) {
  Doc d("a: 4\nb: 4.5\nc: abc\nd: +3\ne: 99999999999\nf: 9\n");
  MapReader r = d.reader();
  int a = 0, b = -1, c = -1, dd = 0, e = -1, f = -1;
  EXPECT_TRUE(r.read("a", a));
  EXPECT_EQ(a, 4);
  EXPECT_FALSE(r.read("b", b));
  EXPECT_FALSE(r.read("c", c));
  EXPECT_FALSE(r.read("d", dd));  // a plain decimal has no '+' (it read as 3 until 2026-12-05)
  EXPECT_FALSE(r.read("e", e));  // does not fit an int
  EXPECT_FALSE(r.read("f", f, Need::kOptional, 1, 8));
  // Failed reads leave the output unchanged.
  EXPECT_EQ(b, -1);
  EXPECT_EQ(c, -1);
  EXPECT_EQ(dd, 0);
  EXPECT_EQ(e, -1);
  EXPECT_EQ(f, -1);
  ASSERT_EQ(d.count(), 5u);
  EXPECT_EQ(d.error(0).key_path, "sec.b");
  EXPECT_EQ(d.error(0).line, 2);
  EXPECT_EQ(d.error(0).file, "m.yaml");
  EXPECT_EQ(d.error(0).message, "expected an integer, got '4.5'");
  EXPECT_EQ(d.error(2).key_path, "sec.d");
  EXPECT_EQ(d.error(2).message, "expected an integer (a plain decimal: no '+' sign, no spaces around the digits), got '+3'");
  EXPECT_EQ(d.error(4).key_path, "sec.f");
  EXPECT_EQ(d.error(4).message, "expected an integer in [1, 8], got '9'");
}

// Integers and reals take one form: digits with an optional '-', no '+' and no spaces inside the
// scalar (a quoted ' 4'; YAML's own spaces around a plain scalar, `a: 4`, are not in its text).
// '+' passed for both until 2026-12-05.
TEST(MapReaderNumbers, SignAndSpacesInsideTheScalarAreRefused) {
  Doc d("i: +8\nu: +8\nx: +1.1\nqi: ' 4'\nqx: '1.1 '\nqu: ' 7'\nok: 8\nneg: -1.5\nexp: 1e+3\n");
  MapReader r = d.reader();
  int i = 0, qi = 0, ok = 0;
  uint64_t u = 0, qu = 0;
  double x = 0, qx = 0, neg = 0, ex = 0;
  EXPECT_FALSE(r.read("i", i));
  EXPECT_FALSE(r.read("u", u));
  EXPECT_FALSE(r.read("x", x));
  EXPECT_FALSE(r.read("qi", qi));
  EXPECT_FALSE(r.read("qx", qx));
  EXPECT_FALSE(r.read("qu", qu));
  EXPECT_TRUE(r.read("ok", ok));
  EXPECT_EQ(ok, 8);
  EXPECT_TRUE(r.read("neg", neg));
  EXPECT_DOUBLE_EQ(neg, -1.5);
  EXPECT_TRUE(r.read("exp", ex));  // an exponent's sign is part of the decimal form
  EXPECT_DOUBLE_EQ(ex, 1000);
  ASSERT_EQ(d.count(), 6u);
  for (size_t k = 0; k < d.count(); ++k) {
    EXPECT_TRUE(contains(d.error(k).message, "(a plain decimal: no '+' sign, no spaces around the digits)"))
        << d.error(k).message;
  }
  EXPECT_EQ(d.error(2).to_string(),
            "m.yaml:3: sec.x: expected a number (a plain decimal: no '+' sign, no spaces around the digits), got '+1.1'");
  EXPECT_EQ(d.error(3).message,
            "expected an integer (a plain decimal: no '+' sign, no spaces around the digits), got ' 4'");
  EXPECT_EQ(i, 0);
  EXPECT_EQ(x, 0);
}

// A leading zero is refused: YAML 1.1 tools read 010 as octal 8, YAML 1.2 as 10 (`tp: 08` read as
// 8 until 2026-12-06), also where a real is expected. A lone 0 and 0.5 are plain decimals, and so
// is 00.5, which both read as one half (refused with the octal hint until 2026-12-06).
// A refused value with a carriage return, line break or tab shows it escaped (a --set of
// 'tp=8<CR>' printed as '8', the return moving the cursor, until 2026-12-06).
TEST(MapReaderNumbers, ControlCharactersInARefusedValueAreShownEscaped) {
  // (A "\r" escape is refused as the file is read, since 2026-12-07: ParseYamlText tests.)
  Doc d("i: \"8\\n\"\nj: \"4\\t\"\n");
  MapReader r = d.reader();
  int i = 7, j = 7;
  EXPECT_FALSE(r.read("i", i));
  EXPECT_FALSE(r.read("j", j));
  ASSERT_EQ(d.count(), 2u);
  EXPECT_NE(d.error(0).to_string().find("got '8\\n'"), std::string::npos) << d.error(0).to_string();
  EXPECT_NE(d.error(1).to_string().find("got '4\\t'"), std::string::npos) << d.error(1).to_string();
}

TEST(MapReaderNumbers, LeadingZerosAreRefused) {
  Doc d("i: 08\nu: 010\nx: 00.5\nneg: -07\nzero: 0\nhalf: 0.5\nr: 010\ne: 01e1\n");
  MapReader r = d.reader();
  int i = 7, neg = 7, zero = 7;
  uint64_t u = 7;
  double x = 7, half = 7, real = 7, e = 7;
  EXPECT_FALSE(r.read("i", i));
  EXPECT_FALSE(r.read("u", u));
  EXPECT_TRUE(r.read("x", x));
  EXPECT_DOUBLE_EQ(x, 0.5);
  EXPECT_FALSE(r.read("neg", neg));
  EXPECT_TRUE(r.read("zero", zero));
  EXPECT_EQ(zero, 0);
  EXPECT_TRUE(r.read("half", half));
  EXPECT_DOUBLE_EQ(half, 0.5);
  EXPECT_FALSE(r.read("r", real));
  EXPECT_TRUE(r.read("e", e));
  EXPECT_DOUBLE_EQ(e, 10.0);
  ASSERT_EQ(d.count(), 4u);
  EXPECT_EQ(d.error(0).to_string(),
            "m.yaml:1: sec.i: expected an integer (a plain decimal without leading zeros: YAML 1.1 tools read 010 as "
            "octal 8), got '08'");
  EXPECT_NE(d.error(3).to_string().find("sec.r: expected a number (a plain decimal without leading zeros"),
            std::string::npos)
      << d.error(3).to_string();
  EXPECT_EQ(i, 7);
  EXPECT_EQ(u, 7u);
  EXPECT_EQ(real, 7.0);
}

// '-0' where no value below zero is allowed is refused, as a sign on a quantity is ('-0' read as 0
// and -0.0 until 2026-12-05); where values below zero are allowed it is 0.
TEST(MapReaderNumbers, MinusZeroOnlyWhereNegativesAreAllowed) {
  Doc d("i: -0\nx: -0.0\nfree_i: -0\nfree_x: -0\n");
  MapReader r = d.reader();
  int i = 7, free_i = 7;
  double x = 7, free_x = 7;
  EXPECT_FALSE(r.read("i", i, Need::kOptional, 0, 3));
  EXPECT_FALSE(r.read("x", x, Need::kOptional, 0.0, 1.0));
  EXPECT_TRUE(r.read("free_i", free_i));
  EXPECT_TRUE(r.read("free_x", free_x));
  EXPECT_EQ(free_i, 0);
  EXPECT_EQ(free_x, 0.0);
  ASSERT_EQ(d.count(), 2u);
  EXPECT_EQ(d.error(0).message, "expected an integer in [0, 3], got '-0'");
  EXPECT_EQ(d.error(1).message, "expected a number >= 0 and <= 1, got '-0.0'");
  EXPECT_EQ(i, 7);
  EXPECT_EQ(x, 7);
}

TEST(MapReaderInt, LowerBoundOnlyIsNamed) {
  Doc d("gpus: 0\n");
  MapReader r = d.reader("cluster");
  int gpus = 5;
  EXPECT_FALSE(r.read("gpus", gpus, Need::kRequired, 1));
  ASSERT_EQ(d.count(), 1u);
  EXPECT_EQ(d.error().message, "expected an integer >= 1, got '0'");
  EXPECT_EQ(d.error().to_string(), "m.yaml:1: cluster.gpus: expected an integer >= 1, got '0'");
}

TEST(MapReaderUint64, RejectsNegative) {
  Doc d("seed: 18446744073709551615\nbad: -1\n");
  MapReader r = d.reader();
  uint64_t seed = 0, bad = 7;
  EXPECT_TRUE(r.read("seed", seed));
  EXPECT_EQ(seed, UINT64_MAX);
  EXPECT_FALSE(r.read("bad", bad));
  EXPECT_EQ(bad, 7u);
  EXPECT_TRUE(contains(d.error().message, "non-negative integer"));
}

TEST(MapReaderDouble, RangeAndNonFinite) {
  Doc d("x: 0.5\nlow: 0.5\nn: nan\ni: inf\nbig: 1e400\n");
  MapReader r = d.reader();
  double x = 0, low = 9, n = 9, i = 9, big = 9;
  EXPECT_TRUE(r.read("x", x));
  EXPECT_DOUBLE_EQ(x, 0.5);
  EXPECT_FALSE(r.read("low", low, Need::kOptional, 1.0, 64.0));
  EXPECT_FALSE(r.read("n", n));
  EXPECT_FALSE(r.read("i", i));
  EXPECT_FALSE(r.read("big", big));
  EXPECT_EQ(d.count(), 4u);
  EXPECT_TRUE(contains(d.error(0).message, "a number >= 1"));
  EXPECT_TRUE(contains(d.error(0).message, "<= 64"));
  EXPECT_DOUBLE_EQ(low, 9);
}

TEST(MapReaderRatio, NumberOrWholePortCounts) {
  // The Clos error suggests whole splits such as 86:42; they read back as that exact ratio.
  Doc d("a: 2.5\nb: \"86:42\"\nc: 86:42\nd: 0:4\ne: 4:x\nf: 0.5\ng: 3:1:1\n");
  MapReader r = d.reader();
  double a = 0, b = 0, c = 0, dd = -1, e = -1, f = -1, g = -1;
  EXPECT_TRUE(r.read_ratio("a", a, 1.0, 64.0));
  EXPECT_EQ(a, 2.5);
  EXPECT_TRUE(r.read_ratio("b", b, 1.0, 64.0));
  EXPECT_EQ(b, 86.0 / 42.0);
  EXPECT_TRUE(r.read_ratio("c", c, 1.0, 64.0));  // YAML 1.2: a plain string, not base 60
  EXPECT_EQ(c, 86.0 / 42.0);
  EXPECT_FALSE(r.read_ratio("d", dd, 1.0, 64.0));
  EXPECT_FALSE(r.read_ratio("e", e, 1.0, 64.0));
  EXPECT_FALSE(r.read_ratio("f", f, 1.0, 64.0));
  EXPECT_FALSE(r.read_ratio("g", g, 1.0, 64.0));
  EXPECT_EQ(dd, -1);
  ASSERT_EQ(d.count(), 4u);
  EXPECT_EQ(d.error(0).key_path, "sec.d");
  EXPECT_TRUE(contains(d.error(0).message, "whole port counts")) << d.error(0).message;
}

// With the switch's ports: counts that add up to them, or a ratio in lowest terms; "60:20" on 64
// ports is neither (before 2026-12-05 it built 48:16 without a word).
TEST(MapReaderRatio, PortCountsAddUpToTheRadix) {
  Doc d("a: \"48:16\"\nb: \"3:1\"\nc: \"60:20\"\nd: \"4:2\"\ne: \"43:21\"\n");
  MapReader r = d.reader();
  double a = 0, b = 0, c = -1, dd = -1, e = 0;
  EXPECT_TRUE(r.read_ratio("a", a, 1.0, 64.0, 64));
  EXPECT_EQ(a, 3.0);
  EXPECT_TRUE(r.read_ratio("b", b, 1.0, 64.0, 64));
  EXPECT_EQ(b, 3.0);
  EXPECT_FALSE(r.read_ratio("c", c, 1.0, 64.0, 64));
  EXPECT_FALSE(r.read_ratio("d", dd, 1.0, 64.0, 64));
  EXPECT_TRUE(r.read_ratio("e", e, 1.0, 64.0, 64));
  EXPECT_EQ(e, 43.0 / 21.0);
  ASSERT_EQ(d.count(), 2u);
  EXPECT_EQ(d.error(0).key_path, "sec.c");
  EXPECT_TRUE(contains(d.error(0).message, "\"60:20\" gives 80")) << d.error(0).message;
  EXPECT_TRUE(contains(d.error(1).message, "lowest terms (\"2:1\")")) << d.error(1).message;
}

TEST(MapReaderBool, OnlyTrueAndFalse) {
  Doc d("a: true\nb: false\nc: yes\nd: True\n");
  MapReader r = d.reader();
  bool a = false, b = true, c = false, dd = false;
  EXPECT_TRUE(r.read("a", a));
  EXPECT_TRUE(r.read("b", b));
  EXPECT_TRUE(a);
  EXPECT_FALSE(b);
  EXPECT_FALSE(r.read("c", c));
  EXPECT_FALSE(r.read("d", dd));
  ASSERT_EQ(d.count(), 2u);
  EXPECT_EQ(d.error(0).message, "expected true or false, got 'yes'");
}

TEST(MapReaderString, NonScalarIsAnError) {
  Doc d("name: hello\nlist: [1]\nmap: {a: 1}\n");
  MapReader r = d.reader();
  std::string name, list = "keep", map = "keep";
  EXPECT_TRUE(r.read("name", name));
  EXPECT_EQ(name, "hello");
  EXPECT_FALSE(r.read("list", list));
  EXPECT_FALSE(r.read("map", map));
  ASSERT_EQ(d.count(), 2u);
  EXPECT_EQ(d.error(0).message, "expected a single value, got a list");
  EXPECT_EQ(d.error(1).message, "expected a single value, got a mapping");
  EXPECT_EQ(list, "keep");
}

TEST(MapReaderUnits, ReadsEveryUnitType) {
  Doc d("t: 2us\nb: 80GiB\nbw: 400Gbps\nf: 312TFLOPS\nopt: 50GBps\n");
  MapReader r = d.reader();
  Time t;
  Bytes b;
  Bandwidth bw;
  FlopRate f;
  std::optional<Bandwidth> opt, absent;
  EXPECT_TRUE(r.read("t", t));
  EXPECT_TRUE(r.read("b", b));
  EXPECT_TRUE(r.read("bw", bw));
  EXPECT_TRUE(r.read("f", f));
  EXPECT_TRUE(r.read("opt", opt));
  EXPECT_FALSE(r.read("absent", absent));
  EXPECT_EQ(t, Time::us(2));
  EXPECT_EQ(b, Bytes::gib(80));
  EXPECT_DOUBLE_EQ(bw.bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(f.per_s, 312e12);
  ASSERT_TRUE(opt.has_value());
  EXPECT_DOUBLE_EQ(opt->bytes_per_s, 50e9);
  EXPECT_FALSE(absent.has_value());
  EXPECT_TRUE(d.errors.empty());
}

TEST(MapReaderUnits, WrongUnitsNameTheExpectedForm) {
  Doc d("t: 2\nb: 80gib\nbw: 200Gbs\nzero: 0Gbps\nf: 312TF\n");
  MapReader r = d.reader("net");
  Time t;
  Bytes b;
  Bandwidth bw, zero;
  FlopRate f;
  EXPECT_FALSE(r.read("t", t));
  EXPECT_FALSE(r.read("b", b));
  EXPECT_FALSE(r.read("bw", bw));
  EXPECT_FALSE(r.read("zero", zero));
  EXPECT_FALSE(r.read("f", f));
  ASSERT_EQ(d.count(), 5u);
  EXPECT_TRUE(contains(d.error(0).message, kTimeForm));
  EXPECT_TRUE(contains(d.error(1).message, kBytesForm));
  EXPECT_EQ(d.error(2).key_path, "net.bw");
  EXPECT_EQ(d.error(2).line, 3);
  EXPECT_TRUE(contains(d.error(2).message, kBandwidthForm));
  EXPECT_TRUE(contains(d.error(2).message, "'200Gbs'"));
  EXPECT_TRUE(contains(d.error(3).message, "between 1Mbps and 1Pbps"));
  EXPECT_TRUE(contains(d.error(4).message, kFlopRateForm));
}

TEST(MapReaderRequired, MissingAndNullRequiredKeys) {
  Doc d("present: 1\nempty:\n");
  MapReader r = d.reader("model");
  int present = 0, missing = 0, empty = 0, optional_missing = 42;
  EXPECT_TRUE(r.read("present", present, Need::kRequired));
  EXPECT_FALSE(r.read("missing", missing, Need::kRequired));
  EXPECT_FALSE(r.read("empty", empty, Need::kRequired));
  EXPECT_FALSE(r.read("optional_missing", optional_missing));
  EXPECT_EQ(optional_missing, 42);
  ASSERT_EQ(d.count(), 2u);
  EXPECT_EQ(d.error(0).key_path, "model.missing");
  EXPECT_EQ(d.error(0).message, "required key is missing");
  EXPECT_EQ(d.error(1).key_path, "model.empty");
}

// A section given as a list is refused once; its required keys are not each reported missing too.
TEST(MapReaderRequired, ASectionThatIsNoMappingIsOneError) {
  Doc d("- {hosts: [1]}\n");
  MapReader r = d.reader("stragglers.nics");
  int hosts = 0;
  EXPECT_FALSE(r.read("hosts", hosts, Need::kRequired));
  r.missing("nic");
  r.finish();
  ASSERT_EQ(d.count(), 1u);
  EXPECT_EQ(d.error(0).message, "expected a mapping of keys, got a list");
}

TEST(MapReaderRequired, AbsentSectionReadsAsAbsent) {
  ErrorList errors;
  MapReader r(nullptr, "training", errors);
  int batch = 3, opt = 4;
  EXPECT_FALSE(r.has("global_batch"));
  EXPECT_FALSE(r.read("global_batch", batch, Need::kRequired));
  EXPECT_FALSE(r.read("other", opt));
  r.finish();  // nothing to report about unknown keys
  ASSERT_EQ(errors.errors().size(), 1u);
  EXPECT_EQ(errors.errors()[0].key_path, "training.global_batch");
  EXPECT_EQ(errors.errors()[0].line, 0);
  EXPECT_EQ(batch, 3);
}

TEST(MapReaderSections, NestedPathsAndNonMappings) {
  Doc d("outer:\n  inner:\n    k: 1\nscalar: 5\n");
  MapReader top = d.reader("");
  MapReader inner = top.section("outer").section("inner");
  int k = 0;
  EXPECT_TRUE(inner.read("k", k));
  EXPECT_EQ(k, 1);
  EXPECT_EQ(inner.key_path("k"), "outer.inner.k");
  EXPECT_EQ(inner.file(), "m.yaml");
  MapReader s = top.section("scalar");
  ASSERT_EQ(d.count(), 1u);
  EXPECT_EQ(d.error().key_path, "scalar");
  EXPECT_EQ(d.error().message, "expected a mapping of keys, got a value");
  EXPECT_EQ(d.error().line, 4);
  // Reading from the rejected section reports nothing more.
  int x = 0;
  EXPECT_FALSE(s.read("x", x));
  EXPECT_EQ(d.count(), 1u);
}

TEST(MapReaderEnum, ListsTheNames) {
  enum class Color { kRed, kGreen };
  Doc d("good: green\nbad: blue\n");
  MapReader r = d.reader();
  Color good = Color::kRed, bad = Color::kRed;
  EXPECT_TRUE(r.read_enum("good", good, {{"red", Color::kRed}, {"green", Color::kGreen}}));
  EXPECT_EQ(good, Color::kGreen);
  EXPECT_FALSE(r.read_enum("bad", bad, {{"red", Color::kRed}, {"green", Color::kGreen}}));
  ASSERT_EQ(d.count(), 1u);
  EXPECT_EQ(d.error().message, "expected one of red, green, got 'blue'");
}

TEST(MapReaderFinish, UnknownKeyWithSuggestion) {
  Doc d("layers: 2\nhiden: 3\n");
  MapReader r = d.reader("model");
  int layers = 0, hidden = 0;
  r.read("layers", layers);
  r.read("hidden", hidden);
  r.finish();
  ASSERT_EQ(d.count(), 1u);
  EXPECT_EQ(d.error().key_path, "model.hiden");
  EXPECT_EQ(d.error().line, 2);
  EXPECT_EQ(d.error().message, "unknown key; did you mean 'hidden'?");
}

// Of keys equally close, the one sharing the longest start ('pp', first by name, until 2026-12-06).
TEST(MapReaderFinish, ATieGoesToTheKeySharingTheLongestStart) {
  Doc d("tpp: 2\n");
  MapReader r = d.reader("parallelism");
  int tp = 0, pp = 0;
  r.read("pp", pp);
  r.read("tp", tp);
  r.finish();
  ASSERT_EQ(d.count(), 1u);
  EXPECT_EQ(d.error().message, "unknown key; did you mean 'tp'?");
}

// A name that holds a known one whole at a word's edge, or is held by one, suggests it: the same
// setting as another section spells it (no suggestion until 2026-12-07; QA).
TEST(MapReaderFinish, ANameHoldingAKnownOneSuggestsIt) {
  const auto suggestion = [](const std::string& text) {
    Doc d(text);
    MapReader r = d.reader("inference.moe");
    int dense = 0, experts = 0;
    r.read("dense_layers", dense);
    r.read("experts", experts);
    r.finish();
    return d.count() == 1 ? d.error().message : std::string("errors: ") + std::to_string(d.count());
  };
  EXPECT_EQ(suggestion("first_dense_layers: 3\n"), "unknown key; did you mean 'dense_layers'?");
  EXPECT_EQ(suggestion("num_experts: 8\n"), "unknown key; did you mean 'experts'?");
  // Inside a word it is no match.
  EXPECT_EQ(suggestion("theexpertsyes: 8\n"), "unknown key; known keys here: dense_layers, experts");
}

TEST(MapReaderFinish, FarKeyListsTheKnownKeys) {
  Doc d("layers: 2\nwidth_of_everything: 3\n");
  MapReader r = d.reader("model");
  int layers = 0, hidden = 0;
  r.read("layers", layers);
  r.read("hidden", hidden);
  r.finish();
  ASSERT_EQ(d.count(), 1u);
  EXPECT_EQ(d.error().message, "unknown key; known keys here: hidden, layers");
}

TEST(MapReaderFinish, ChildAndSectionMarkKeysKnown) {
  Doc d("raw: [1]\nsec: {a: 1}\n");
  MapReader r = d.reader("");
  EXPECT_NE(r.child("raw"), nullptr);
  MapReader s = r.section("sec");
  int a = 0;
  s.read("a", a);
  s.finish();
  r.finish();
  EXPECT_TRUE(d.errors.empty());
}

TEST(MapReaderError, CrossFieldErrorsPointAtTheKey) {
  Doc d("tp: 3\n");
  MapReader r = d.reader("parallelism");
  r.error("tp", "must divide heads");
  r.error("absent", "needs a value");
  ASSERT_EQ(d.count(), 2u);
  EXPECT_EQ(d.error(0).to_string(), "m.yaml:1: parallelism.tp: must divide heads");
  // An absent key is reported at the mapping.
  EXPECT_EQ(d.error(1).key_path, "parallelism.absent");
  EXPECT_EQ(d.error(1).line, 1);
}

TEST(ErrorList, ThrowsEveryErrorAtOnce) {
  ErrorList errors;
  EXPECT_NO_THROW(errors.throw_if_any());
  errors.add(InputError{"f.yaml", 3, "a.b", "first"});
  errors.add(InputError{"", 0, "", "second"});
  try {
    errors.throw_if_any();
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    ASSERT_EQ(e.errors().size(), 2u);
    EXPECT_EQ(std::string(e.what()), "f.yaml:3: a.b: first\nsecond");
  }
}

TEST(MapReaderNull, AKeyWithoutAValueIsAnError) {
  // `micro_batch:` with nothing after it must not quietly take the default.
  Doc d("a:\nb: ~\nc: 2\n");
  MapReader r = d.reader();
  int a = 7, b = 7, c = 0;
  EXPECT_FALSE(r.read("a", a));
  EXPECT_FALSE(r.read("b", b, Need::kRequired));
  EXPECT_TRUE(r.read("c", c));
  ASSERT_EQ(d.count(), 2u);
  EXPECT_EQ(d.error(0).key_path, "sec.a");
  EXPECT_EQ(d.error(0).line, 1);
  EXPECT_TRUE(contains(d.error(0).message, "has no value")) << d.error(0).message;
  EXPECT_EQ(d.error(1).key_path, "sec.b");
  EXPECT_EQ(a, 7);
}

TEST(MapReaderNull, AnAbsentSectionsErrorsNameTheFile) {
  // `model: null`, a section written with no value, is refused at its line (taken for an absent
  // one until 2026-12-06, so `network:` alone ran every default); a missing section's required
  // keys are reported with the file.
  Doc d("name: x\nmodel: null\n");
  MapReader top = d.reader("");
  int layers = 0, batch = 0;
  top.section("model").read("layers", layers, Need::kRequired);
  top.section("training").read("global_batch", batch, Need::kRequired);
  // Said once, not again as each of its required keys.
  ASSERT_EQ(d.count(), 2u);
  EXPECT_EQ(d.error(0).key_path, "model");
  EXPECT_TRUE(contains(d.error(0).message, "has no value")) << d.error(0).message;
  EXPECT_EQ(d.error(0).line, 2);
  EXPECT_EQ(d.error(1).key_path, "training.global_batch");
  EXPECT_EQ(d.error(1).file, "m.yaml");
}

TEST(MapReaderMessages, BoundsPrintShortAndCaseSuggests) {
  Doc d("rate: 0\nTP: 4\n");
  MapReader r = d.reader();
  double rate = 1;
  int tp = 1;
  EXPECT_FALSE(r.read("rate", rate, Need::kOptional, 1e-9, 1e9));
  r.read("tp", tp);
  r.read("cp", tp);
  r.finish();
  ASSERT_EQ(d.count(), 2u);
  EXPECT_TRUE(contains(d.error(0).message, "a number >= 1e-09 and <= 1000000000")) << d.error(0).message;
  EXPECT_TRUE(contains(d.error(1).message, "did you mean 'tp'?")) << d.error(1).message;
}

}  // namespace
}  // namespace clustersim
