// SPDX-License-Identifier: Apache-2.0
// The results.json writer: string escaping, number formatting that is the same on every run,
// insertion order, nesting and indentation.
#include "sim/report/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace clustersim::report {
namespace {

TEST(JsonQuote, EscapesWhatJsonRequires) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote(""), "\"\"");
  EXPECT_EQ(json_quote("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(json_quote("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(json_quote("line\nnext\ttab\rret"), "\"line\\nnext\\ttab\\rret\"");
  // Other control characters as \u00XX.
  EXPECT_EQ(json_quote(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(json_quote(std::string("a\0b", 3)), "\"a\\u0000b\"");
  // UTF-8 and '/' pass through unchanged.
  EXPECT_EQ(json_quote("GPU \xc3\xa9t\xc3\xa9 / 8"), "\"GPU \xc3\xa9t\xc3\xa9 / 8\"");
}

TEST(JsonNumbers, TenSignificantDigits) {
  EXPECT_EQ(Json(0.1).dump(0), "0.1");
  EXPECT_EQ(Json(1.0 / 3.0).dump(0), "0.3333333333");
  EXPECT_EQ(Json(-2.5).dump(0), "-2.5");
  EXPECT_EQ(Json(6.34).dump(0), "6.34");
  EXPECT_EQ(Json(1984000.0).dump(0), "1984000.0");  // a float on every run (since 2026-12-07)
  EXPECT_EQ(Json(1e20).dump(0), "1e+20");
  EXPECT_EQ(Json(1.5e-7).dump(0), "1.5e-07");
  EXPECT_EQ(Json(0.0).dump(0), "0.0");
  EXPECT_EQ(Json(1234567890.7).dump(0), "1234567891.0");  // ten digits, still a float
}

TEST(JsonNumbers, NonFiniteBecomesNull) {
  // JSON has no NaN or infinity.
  EXPECT_EQ(Json(std::nan("")).dump(0), "null");
  EXPECT_EQ(Json(std::numeric_limits<double>::infinity()).dump(0), "null");
  EXPECT_EQ(Json(-std::numeric_limits<double>::infinity()).dump(0), "null");
}

TEST(JsonNumbers, IntegersAreExact) {
  EXPECT_EQ(Json(42).dump(0), "42");
  EXPECT_EQ(Json(-7).dump(0), "-7");
  // 2^53 + 1 does not survive a double; as an integer it prints exactly.
  EXPECT_EQ(Json(int64_t{9007199254740993}).dump(0), "9007199254740993");
  // A whole double below 2^53 (a count held as a double) prints every digit: 1.747731333e+11
  // until 2026-12-06; past 2^53, and -0, as before. With ".0" since 2026-12-07: a key is a float
  // on every run, whole or not.
  EXPECT_EQ(Json(174773133312.0).dump(0), "174773133312.0");
  EXPECT_EQ(Json(-1077386674176.0).dump(0), "-1077386674176.0");
  EXPECT_EQ(Json(-0.0).dump(0), "0.0");
  EXPECT_EQ(Json(1e20).dump(0), "1e+20");
}

TEST(JsonScalars, NullBoolString) {
  EXPECT_EQ(Json().dump(0), "null");
  EXPECT_EQ(Json(true).dump(0), "true");
  EXPECT_EQ(Json(false).dump(0), "false");
  EXPECT_EQ(Json("text").dump(0), "\"text\"");
  EXPECT_EQ(Json(std::string("q\"")).dump(0), "\"q\\\"\"");
  // dump with an indent ends with a newline (files end with one).
  EXPECT_EQ(Json(1).dump(2), "1\n");
}

TEST(JsonObject, KeepsInsertionOrderAndReplacesInPlace) {
  Json o = Json::object();
  o.set("zeta", 1);
  o.set("alpha", 2);
  o.set("mid", 3);
  o.set("zeta", 9);  // replaced where it was, not moved to the end
  EXPECT_EQ(o.dump(0), "{\"zeta\":9,\"alpha\":2,\"mid\":3}");
}

TEST(JsonObject, IndexInsertsNullAndMakesAnObject) {
  Json j;  // null until used as an object
  j["a"];
  j["b"] = Json(1);
  EXPECT_EQ(j.dump(0), "{\"a\":null,\"b\":1}");
}

TEST(JsonArray, PushMakesAnArray) {
  Json a;
  a.push(1);
  a.push("two");
  a.push(Json());
  EXPECT_EQ(a.dump(0), "[1,\"two\",null]");
}

TEST(JsonEmpty, ContainersPrintCompactly) {
  EXPECT_EQ(Json::object().dump(0), "{}");
  EXPECT_EQ(Json::array().dump(0), "[]");
  EXPECT_EQ(Json::object().dump(2), "{}\n");
  EXPECT_EQ(Json::array().dump(2), "[]\n");
}

Json nested() {
  Json r = Json::object();
  r.set("kind", "training");
  Json& plan = r.set("plan", Json::object());
  plan.set("tp", 8);
  plan.set("pp", 8);
  Json& rows = r.set("rows", Json::array());
  Json row = Json::object();
  row.set("mfu", 0.552);
  rows.push(row);
  rows.push(Json::array());
  r.set("ok", true);
  return r;
}

TEST(JsonNesting, CompactForm) {
  EXPECT_EQ(nested().dump(0),
            "{\"kind\":\"training\",\"plan\":{\"tp\":8,\"pp\":8},\"rows\":[{\"mfu\":0.552},[]],\"ok\":true}");
}

TEST(JsonNesting, IndentedForm) {
  EXPECT_EQ(nested().dump(2),
            "{\n"
            "  \"kind\": \"training\",\n"
            "  \"plan\": {\n"
            "    \"tp\": 8,\n"
            "    \"pp\": 8\n"
            "  },\n"
            "  \"rows\": [\n"
            "    {\n"
            "      \"mfu\": 0.552\n"
            "    },\n"
            "    []\n"
            "  ],\n"
            "  \"ok\": true\n"
            "}\n");
}

TEST(JsonNesting, IndentIsPerLevel) {
  Json o = Json::object();
  o.set("a", Json::object()).set("b", 1);
  EXPECT_EQ(o.dump(4), "{\n    \"a\": {\n        \"b\": 1\n    }\n}\n");
}

TEST(JsonDeterminism, SameValueSameText) {
  // Golden tests compare results.json byte for byte: two builds of the same value must match.
  EXPECT_EQ(nested().dump(2), nested().dump(2));
  EXPECT_EQ(nested().dump(0), nested().dump(0));
}

}  // namespace
}  // namespace clustersim::report
