// SPDX-License-Identifier: Apache-2.0
// Strong unit types: simulated time, byte counts, bandwidth, FLOP counts and FLOP rates.
#pragma once

#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace clustersim {

// Simulated time: integer picoseconds, so sums are exact and ordering is total.
// Range: +-106 days, enough for month-long reliability studies.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time zero() { return Time(0); }
  static constexpr Time ps(int64_t v) { return Time(v); }
  static Time ns(double v) { return from_double(v * 1e3); }
  static Time us(double v) { return from_double(v * 1e6); }
  static Time ms(double v) { return from_double(v * 1e9); }
  static Time s(double v) { return from_double(v * 1e12); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t as_ps() const { return ps_; }
  constexpr double as_s() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double as_us() const { return static_cast<double>(ps_) * 1e-6; }

  // Integer arithmetic saturates at +-max() as from_double does (a sum past 106 days reads as
  // "never", not as a negative time). Saturation is not sticky: max() - t is an ordinary time, so
  // a difference taken from a saturated end is wrong; run_scenario refuses results at the limit.
  friend constexpr Time operator+(Time a, Time b) {
    int64_t r = 0;
    return __builtin_add_overflow(a.ps_, b.ps_, &r) ? saturated(b.ps_ > 0) : Time(r);
  }
  friend constexpr Time operator-(Time a, Time b) {
    int64_t r = 0;
    return __builtin_sub_overflow(a.ps_, b.ps_, &r) ? saturated(b.ps_ < 0) : Time(r);
  }
  friend constexpr Time operator*(int64_t k, Time a) {
    int64_t r = 0;
    return __builtin_mul_overflow(k, a.ps_, &r) ? saturated((k > 0) == (a.ps_ > 0)) : Time(r);
  }
  friend constexpr Time operator*(int k, Time a) { return static_cast<int64_t>(k) * a; }
  friend Time operator*(double k, Time a) { return from_double(k * static_cast<double>(a.ps_)); }
  friend constexpr double operator/(Time a, Time b) {
    return static_cast<double>(a.ps_) / static_cast<double>(b.ps_);
  }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  friend constexpr auto operator<=>(Time a, Time b) = default;

 private:
  constexpr explicit Time(int64_t ps) : ps_(ps) {}
  static constexpr Time saturated(bool positive) {
    return positive ? max() : Time(-std::numeric_limits<int64_t>::max());
  }
  // Saturates at +-max() (about 106 days) rather than overflowing; inputs are bounded by the
  // scenario checks so that real runs stay far inside the range.
  static Time from_double(double ps) {
    assert(!std::isnan(ps) && "time must be a number");
    constexpr double kLimit = 9.2e18;
    if (!(ps < kLimit)) return max();
    if (!(ps > -kLimit)) return Time(-std::numeric_limits<int64_t>::max());
    return Time(std::llround(ps));
  }
  int64_t ps_ = 0;
};

inline Time max(Time a, Time b) { return a < b ? b : a; }
inline Time min(Time a, Time b) { return a < b ? a : b; }

// A byte count. Signed so that differences are safe; never negative in valid configs.
struct Bytes {
  int64_t n = 0;
  static constexpr Bytes kib(int64_t v) { return Bytes{v << 10}; }
  static constexpr Bytes mib(int64_t v) { return Bytes{v << 20}; }
  static constexpr Bytes gib(int64_t v) { return Bytes{v << 30}; }
  constexpr double as_double() const { return static_cast<double>(n); }
  constexpr double as_gib() const { return static_cast<double>(n) / (1024.0 * 1024.0 * 1024.0); }
  friend constexpr Bytes operator+(Bytes a, Bytes b) { return Bytes{a.n + b.n}; }
  friend constexpr Bytes operator-(Bytes a, Bytes b) { return Bytes{a.n - b.n}; }
  friend constexpr Bytes operator*(int64_t k, Bytes a) { return Bytes{k * a.n}; }
  friend constexpr Bytes operator*(int k, Bytes a) { return Bytes{k * a.n}; }
  constexpr Bytes& operator+=(Bytes o) { n += o.n; return *this; }
  friend constexpr auto operator<=>(Bytes a, Bytes b) = default;
};

// Rounds a fractional byte count (from a formula) to the nearest byte.
inline Bytes bytes_of(double v) { return Bytes{std::llround(v)}; }

// Data rate in bytes per second. Make with gbps(400) (bits) or gbytes_per_s(50) (bytes).
struct Bandwidth {
  double bytes_per_s = 0;
  constexpr double as_gbps() const { return bytes_per_s * 8e-9; }
  constexpr double as_gbytes_per_s() const { return bytes_per_s * 1e-9; }
  friend constexpr Bandwidth operator*(double k, Bandwidth b) { return {k * b.bytes_per_s}; }
  friend constexpr auto operator<=>(Bandwidth a, Bandwidth b) = default;
};
constexpr Bandwidth gbps(double v) { return {v * 1e9 / 8.0}; }
constexpr Bandwidth gbytes_per_s(double v) { return {v * 1e9}; }

// A count of floating-point operations (double: 1e24 FLOP jobs overflow int64).
struct Flops {
  double n = 0;
  friend constexpr Flops operator+(Flops a, Flops b) { return {a.n + b.n}; }
  friend constexpr Flops operator*(double k, Flops a) { return {k * a.n}; }
  constexpr Flops& operator+=(Flops o) { n += o.n; return *this; }
  friend constexpr auto operator<=>(Flops a, Flops b) = default;
};

// A FLOP rate in FLOP/s. Make with tflops(312).
struct FlopRate {
  double per_s = 0;
  constexpr double as_tflops() const { return per_s * 1e-12; }
  friend constexpr FlopRate operator*(double k, FlopRate r) { return {k * r.per_s}; }
  friend constexpr auto operator<=>(FlopRate a, FlopRate b) = default;
};
constexpr FlopRate tflops(double v) { return {v * 1e12}; }

// b / bw, rounded to the nearest picosecond. Zero bandwidth is a caller bug.
inline Time serialization_time(Bytes b, Bandwidth bw) {
  assert(bw.bytes_per_s > 0 && "bandwidth must be positive");
  return Time::s(b.as_double() / bw.bytes_per_s);
}

// f / rate, rounded to the nearest picosecond.
inline Time compute_time(Flops f, FlopRate rate) {
  assert(rate.per_s > 0 && "FLOP rate must be positive");
  return Time::s(f.n / rate.per_s);
}

// A plain number as a person writes it: whole numbers in full (1000000), others to 10
// significant digits (0.5, 1e-09); for messages and labels.
std::string format_number(double v);

// A whole number with thousands separators: 131072 -> "131,072"; a negative one keeps its sign.
std::string with_commas(int64_t v);

// Human-readable forms with units ("1.25 s", "400 Gbps", "80.0 GiB", "312 TFLOP/s").
std::string to_string(Time t);
// Seconds as to_string(Time) writes them, for spans past simulated time's range (106 days).
std::string seconds_to_string(double s);
std::string to_string(Bytes b);
std::string to_string(Bandwidth bw);
// A rate in bytes per second, as storage is quoted: "25.6 TB/s", "999.7 GB/s", "125 MB/s".
std::string bytes_rate_string(Bandwidth bw);
std::string to_string(FlopRate r);

}  // namespace clustersim
