// SPDX-License-Identifier: Apache-2.0
// Strong units: exact picosecond time arithmetic, rounding at the double boundary, conversions.
#include "sim/core/units.h"

#include <gtest/gtest.h>

#include "tests/unit/core/unit_printers.h"

namespace clustersim {
namespace {

TEST(Time, FactoriesScaleToPicoseconds) {
  EXPECT_EQ(Time::ps(7).as_ps(), 7);
  EXPECT_EQ(Time::ns(3).as_ps(), 3'000);
  EXPECT_EQ(Time::us(1.5).as_ps(), 1'500'000);
  EXPECT_EQ(Time::ms(2).as_ps(), 2'000'000'000);
  EXPECT_EQ(Time::s(1).as_ps(), 1'000'000'000'000);
  EXPECT_EQ(Time::zero().as_ps(), 0);
  EXPECT_EQ(Time().as_ps(), 0);
}

TEST(Time, FractionalPicosecondsRoundToNearest) {
  // 0.4 ps -> 0, 0.6 ps -> 1; llround takes halves away from zero: 2.5 ps -> 3.
  EXPECT_EQ(Time::ns(0.0004).as_ps(), 0);
  EXPECT_EQ(Time::ns(0.0006).as_ps(), 1);
  EXPECT_EQ(Time::ns(0.0025).as_ps(), 3);
}

TEST(Time, SumsAreExact) {
  // 0.1 + 0.2 != 0.3 in doubles, but 100 ns + 200 ns is exactly 300 ns in integer picoseconds.
  EXPECT_EQ(Time::ns(100) + Time::ns(200), Time::ns(300));
  Time t = Time::zero();
  for (int i = 0; i < 1000; ++i) t += Time::ns(0.1);  // 1000 x 100 ps
  EXPECT_EQ(t, Time::ns(100));
  t -= Time::ns(40);
  EXPECT_EQ(t, Time::ns(60));
  EXPECT_EQ(Time::us(5) - Time::us(7), Time::ps(-2'000'000));
}

TEST(Time, IntegerArithmeticSaturatesInsteadOfWrapping) {
  // Past +-106 days a sum reads as "never" (max), not as a negative time (before 2026-11-22 a
  // checkpoint interval of 100 days on a 30-day job gave ETTR -16.8%).
  const Time day = Time::s(86400);
  EXPECT_EQ(Time::max() + day, Time::max());
  EXPECT_EQ(100 * day + 100 * day, Time::max());
  EXPECT_EQ((int64_t{1} << 40) * day, Time::max());
  EXPECT_EQ((-(int64_t{1} << 40)) * day, Time::zero() - Time::max());
  EXPECT_EQ(Time::zero() - Time::max() - day, Time::zero() - Time::max());
  Time t = 100 * day;
  t += 10 * day;
  EXPECT_EQ(t, Time::max());
  EXPECT_EQ(3 * day + day, 4 * day);  // inside the range: exact as before
}

TEST(Time, Scaling) {
  // An int literal is ambiguous (int64_t or double); say which.
  EXPECT_EQ(int64_t{3} * Time::us(2), Time::us(6));
  // 0.5 x 3 ps = 1.5 ps, rounded to 2 ps.
  EXPECT_EQ(0.5 * Time::ps(3), Time::ps(2));
  EXPECT_EQ(2.5 * Time::us(2), Time::us(5));
  // Ratio of two times is a plain number.
  EXPECT_DOUBLE_EQ(Time::ms(3) / Time::ms(2), 1.5);
}

TEST(Time, OrderingAndMinMax) {
  EXPECT_LT(Time::ns(999), Time::us(1));
  EXPECT_EQ(max(Time::ns(5), Time::ns(7)), Time::ns(7));
  EXPECT_EQ(min(Time::ns(5), Time::ns(7)), Time::ns(5));
  EXPECT_GT(Time::max(), Time::s(1e6));
}

TEST(Time, Conversions) {
  EXPECT_DOUBLE_EQ(Time::ms(250).as_s(), 0.25);
  EXPECT_DOUBLE_EQ(Time::ns(1500).as_us(), 1.5);
}

TEST(Bytes, FactoriesAndConversions) {
  EXPECT_EQ(Bytes::kib(1).n, 1024);
  EXPECT_EQ(Bytes::mib(64).n, 64 * 1024 * 1024);
  EXPECT_EQ(Bytes::gib(80).n, int64_t{80} << 30);
  EXPECT_DOUBLE_EQ(Bytes::gib(80).as_gib(), 80.0);
  EXPECT_EQ(Bytes{3} + Bytes{4}, Bytes{7});
  EXPECT_EQ(Bytes{3} - Bytes{4}, Bytes{-1});
  EXPECT_EQ(4 * Bytes{3}, Bytes{12});
  EXPECT_EQ(bytes_of(2.5).n, 3);   // nearest, halves away from zero
  EXPECT_EQ(bytes_of(2.49).n, 2);
}

TEST(Bandwidth, BitsAndBytes) {
  // 400 Gbps = 400e9 / 8 = 50e9 bytes/s; 50 GB/s = 400 Gbps.
  EXPECT_DOUBLE_EQ(gbps(400).bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(gbps(400).as_gbytes_per_s(), 50.0);
  EXPECT_DOUBLE_EQ(gbytes_per_s(50).as_gbps(), 400.0);
  EXPECT_DOUBLE_EQ((0.5 * gbps(400)).bytes_per_s, 25e9);
}

TEST(Bandwidth, StorageRatesReadInBytes) {
  EXPECT_EQ(bytes_rate_string(gbytes_per_s(25600)), "25.6 TB/s");
  EXPECT_EQ(bytes_rate_string(gbytes_per_s(999.7)), "999.7 GB/s");  // "1e+03 GB/s" with 3 digits
  EXPECT_EQ(bytes_rate_string(gbps(1)), "125 MB/s");
}

TEST(SerializationTime, HandExamples) {
  // 1 MB / 100 GB/s = 1e6 / 1e11 s = 10 us.
  EXPECT_EQ(serialization_time(Bytes{1'000'000}, gbytes_per_s(100)), Time::us(10));
  // 64 MiB / 400 Gbps = 67,108,864 B / 50e9 B/s = 1,342,177.28 ns = 1,342,177,280 ps.
  EXPECT_EQ(serialization_time(Bytes::mib(64), gbps(400)).as_ps(), 1'342'177'280);
  EXPECT_EQ(serialization_time(Bytes{0}, gbps(400)), Time::zero());
}

TEST(SerializationTime, RoundsToNearestPicosecond) {
  // 1 B / 3e9 B/s = 333.33 ps -> 333; 2 B -> 666.67 ps -> 667 (the header: nearest, not up).
  EXPECT_EQ(serialization_time(Bytes{1}, gbytes_per_s(3)).as_ps(), 333);
  EXPECT_EQ(serialization_time(Bytes{2}, gbytes_per_s(3)).as_ps(), 667);
}

TEST(ComputeTime, HandExample) {
  // 312e12 FLOP at 312 TFLOP/s = 1 s; 1 GFLOP at 1 TFLOP/s = 1 ms.
  EXPECT_EQ(compute_time(Flops{312e12}, tflops(312)), Time::s(1));
  EXPECT_EQ(compute_time(Flops{1e9}, tflops(1)), Time::ms(1));
  EXPECT_DOUBLE_EQ(tflops(312).as_tflops(), 312.0);
  EXPECT_DOUBLE_EQ((Flops{2} + Flops{3}).n, 5.0);
  EXPECT_DOUBLE_EQ((2.0 * Flops{3}).n, 6.0);
}

TEST(UnitsToString, CarriesUnits) {
  EXPECT_EQ(to_string(Time::ms(1.5)), "1.5 ms");
  EXPECT_EQ(to_string(Time::s(2)), "2 s");
  EXPECT_EQ(to_string(Time::us(3)), "3 us");
  EXPECT_EQ(to_string(Time::s(9999)), "9999 s");
  EXPECT_EQ(to_string(Time::s(36000)), "10 h");
  EXPECT_EQ(to_string(Time::s(30 * 86400.0)), "30 d");
  EXPECT_EQ(to_string(Time::ns(20)), "20 ns");
  EXPECT_EQ(to_string(Time::zero()), "0 s");
  EXPECT_EQ(to_string(Bytes::gib(80)), "80.00 GiB");
  EXPECT_EQ(to_string(Bytes::mib(3)), "3.00 MiB");
  EXPECT_EQ(to_string(Bytes{512}), "512 B");
  EXPECT_EQ(to_string(gbps(400)), "400 Gbps");
  // Aggregates read in Tbps and Pbps, not "8.185e+04 Gbps" (QA 2026-12-07).
  EXPECT_EQ(to_string(gbps(9999)), "9999 Gbps");
  EXPECT_EQ(to_string(gbps(81850)), "81.85 Tbps");
  EXPECT_EQ(to_string(gbps(4.079e7)), "40.79 Pbps");
  EXPECT_EQ(to_string(tflops(312)), "312 TFLOP/s");
}

}  // namespace
}  // namespace clustersim
