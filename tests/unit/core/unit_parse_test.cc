// SPDX-License-Identifier: Apache-2.0
// Unit strings as written in scenarios: every suffix of every family, case sensitivity (Gbps is
// bits, GBps is bytes), and the strings that must be rejected (no unit, negative, NaN, junk).
#include "sim/core/unit_parse.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/core/unit_printers.h"

namespace clustersim {
namespace {

TEST(ParseTime, EverySuffix) {
  EXPECT_EQ(parse_time("100ps")->as_ps(), 100);
  EXPECT_EQ(parse_time("200ns")->as_ps(), 200'000);
  EXPECT_EQ(parse_time("1.5us")->as_ps(), 1'500'000);
  EXPECT_EQ(parse_time("3ms")->as_ps(), 3'000'000'000);
  EXPECT_EQ(*parse_time("2s"), Time::s(2));
  EXPECT_EQ(*parse_time("30min"), Time::s(30 * 60));    // 1800 s
  EXPECT_EQ(*parse_time("4h"), Time::s(4 * 3600));      // 14400 s
  EXPECT_EQ(*parse_time("2d"), Time::s(2 * 86400));     // 172800 s
}

TEST(ParseTime, NumberForms) {
  EXPECT_EQ(*parse_time("1e3us"), Time::ms(1));
  EXPECT_EQ(*parse_time("0s"), Time::zero());
  // Spaces around the value and between number and unit are tolerated.
  EXPECT_EQ(*parse_time(" 2 us "), Time::us(2));
}

TEST(ParseTime, RangeIsTimesRange) {
  // Time holds +-9.22e6 s (int64 picoseconds); the parser stops at 9.0e6 s (104.2 days).
  EXPECT_EQ(*parse_time("100d"), Time::s(100 * 86400.0));  // 8.64e6 s
  EXPECT_FALSE(parse_time("105d"));                        // 9.072e6 s
  EXPECT_FALSE(parse_time("1e400s"));                      // not a finite double
}

TEST(ParseTime, Rejects) {
  for (const char* bad : {"200", "", "us", "1.5US", "2S", "1.5 micro", "-1us", "nanus", "NaNs", "infs",
                          "inf s", "1.5.3us", "1-2us", "1.5us extra", "1,5us", "s1"}) {
    EXPECT_FALSE(parse_time(bad)) << "'" << bad << "'";
  }
}

TEST(ParseBytes, EverySuffix) {
  EXPECT_EQ(parse_bytes("512B")->n, 512);
  EXPECT_EQ(parse_bytes("1KB")->n, 1'000);
  EXPECT_EQ(parse_bytes("1.5MB")->n, 1'500'000);
  EXPECT_EQ(parse_bytes("1.5GB")->n, 1'500'000'000);
  EXPECT_EQ(parse_bytes("2TB")->n, 2'000'000'000'000);
  EXPECT_EQ(parse_bytes("1KiB")->n, 1024);
  EXPECT_EQ(*parse_bytes("64MiB"), Bytes::mib(64));
  EXPECT_EQ(*parse_bytes("80GiB"), Bytes::gib(80));
  EXPECT_EQ(parse_bytes("1TiB")->n, int64_t{1} << 40);
  EXPECT_EQ(parse_bytes("3PB")->n, 3'000'000'000'000'000);
  EXPECT_EQ(parse_bytes("2PiB")->n, int64_t{1} << 51);
  EXPECT_EQ(*parse_bytes("80 GiB"), Bytes::gib(80));
}

// A size is whole bytes: one the rounding would change by more than 0.1% is refused (until
// 2026-12-06 1.5B was 2 B, and a 32-sender incast moved 64 B for the 48 written); past that the
// nearest byte (0.3KiB = 307.2 B, 1.1GiB).
TEST(ParseBytes, WholeBytesOnly) {
  EXPECT_FALSE(parse_bytes("1.5B"));
  EXPECT_FALSE(parse_bytes("0.4B"));
  EXPECT_EQ(parse_bytes("0.3KiB")->n, 307);
  EXPECT_EQ(parse_bytes("1.1GiB")->n, 1'181'116'006);
  EXPECT_EQ(parse_bytes("2.0B")->n, 2);
}

TEST(ParseBytes, Rejects) {
  // Lower-case and bit units are not sizes; a bare number has no unit.
  for (const char* bad : {"4096", "1gib", "1GIB", "1Gib", "1gb", "1Kb", "1b", "-1GiB", "NaNGiB", "1e19B", "GiB",
                          "80 G iB"}) {
    EXPECT_FALSE(parse_bytes(bad)) << "'" << bad << "'";
  }
}

TEST(ParseBandwidth, BitsPerSecond) {
  // Gbps etc. are bits: divide by 8 for bytes/s.
  // (Rates below 1 Mbps are rejected: see OutsideOneMbpsToOnePbpsIsRejected.)
  EXPECT_DOUBLE_EQ(parse_bandwidth("8000000bps")->bytes_per_s, 1e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8000Kbps")->bytes_per_s, 1e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100Mbps")->bytes_per_s, 12.5e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("200Gbps")->bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.6Tbps")->bytes_per_s, 200e9);
}

TEST(ParseBandwidth, BytesPerSecond) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("125000Bps")->bytes_per_s, 125e3);
  EXPECT_DOUBLE_EQ(parse_bandwidth("125KBps")->bytes_per_s, 125e3);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1MBps")->bytes_per_s, 1e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("50GBps")->bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("3.35TBps")->bytes_per_s, 3.35e12);
}

TEST(ParseBandwidth, CaseDecidesBitsVersusBytes) {
  // 400Gbps (bits) = 50 GB/s; 400GBps (bytes) is eight times more.
  EXPECT_DOUBLE_EQ(parse_bandwidth("400GBps")->bytes_per_s, 8.0 * parse_bandwidth("400Gbps")->bytes_per_s);
}

TEST(ParseBandwidth, OutsideOneMbpsToOnePbpsIsRejected) {
  // Below 1 Mbps a few GiB outlast Time's +-106 day range; above 1 Pbps nothing exists.
  EXPECT_FALSE(parse_bandwidth("0Gbps"));
  EXPECT_FALSE(parse_bandwidth("1bps"));
  EXPECT_FALSE(parse_bandwidth("999Kbps"));
  EXPECT_FALSE(parse_bandwidth("1e305Gbps"));
  EXPECT_FALSE(parse_bandwidth("2Pbps"));
  EXPECT_DOUBLE_EQ(parse_bandwidth("1Mbps")->bytes_per_s, 1e6 / 8);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1000Tbps")->bytes_per_s, 1e15 / 8);
  // The bound the message names is a value it takes (before, 'Pbps' was no unit).
  EXPECT_DOUBLE_EQ(parse_bandwidth("1Pbps")->bytes_per_s, 1e15 / 8);
  EXPECT_DOUBLE_EQ(parse_bandwidth("0.1PBps")->bytes_per_s, 1e14);
  EXPECT_FALSE(parse_bandwidth("1PBps"));
}

TEST(ParseBandwidth, Rejects) {
  for (const char* bad : {"200", "200gbps", "200GBPS", "200Gbs", "200Gb/s", "200 Gbit/s", "200GB/s", "-200Gbps",
                          "nanGbps", "Gbps", "200Gbpss"}) {
    EXPECT_FALSE(parse_bandwidth(bad)) << "'" << bad << "'";
  }
}

TEST(ParseFlopRate, EverySuffix) {
  EXPECT_DOUBLE_EQ(parse_flop_rate("5FLOPS")->per_s, 5.0);
  EXPECT_DOUBLE_EQ(parse_flop_rate("19.5GFLOPS")->per_s, 19.5e9);
  EXPECT_DOUBLE_EQ(parse_flop_rate("312TFLOPS")->per_s, 312e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("1.5PFLOPS")->per_s, 1.5e15);
  EXPECT_DOUBLE_EQ(parse_flop_rate("312 TFLOPS")->per_s, 312e12);
}

TEST(ParseFlopRate, Rejects) {
  for (const char* bad : {"312", "312tflops", "312TFlops", "312TFLOP/s", "312TF", "-1TFLOPS", "infTFLOPS"}) {
    EXPECT_FALSE(parse_flop_rate(bad)) << "'" << bad << "'";
  }
}

// Quantities take no sign, not even on zero: '-0us' passed as 0 until 2026-12-05 (-0.0 is not
// below zero), and '+0us' was refused.
TEST(UnitForms, ZeroTakesNoSignEither) {
  EXPECT_FALSE(parse_time("-0us"));
  EXPECT_FALSE(parse_time("+0us"));
  EXPECT_FALSE(parse_bytes("-0GiB"));
  EXPECT_FALSE(parse_bytes("-0.0B"));
  EXPECT_FALSE(parse_flop_rate("-0TFLOPS"));
  EXPECT_EQ(*parse_time("0us"), Time::zero());
  EXPECT_EQ(parse_bytes("0GiB")->n, 0);
}

TEST(UnitForms, NameTheAcceptedForms) {
  // The messages users read when a unit is wrong show a valid example of each family.
  EXPECT_NE(std::string(kTimeForm).find("1.5us"), std::string::npos);
  EXPECT_NE(std::string(kBytesForm).find("80GiB"), std::string::npos);
  EXPECT_NE(std::string(kBandwidthForm).find("400Gbps"), std::string::npos);
  EXPECT_NE(std::string(kBandwidthForm).find("50GBps"), std::string::npos);
  EXPECT_NE(std::string(kFlopRateForm).find("312TFLOPS"), std::string::npos);
}

}  // namespace
}  // namespace clustersim
