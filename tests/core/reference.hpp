// Independent references for the core tests: naive scans and occurrence lists, plus seeded
// generators of bit vectors and texts. Nothing here calls the code under test.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "wtmap/core/status.hpp"

namespace wtmap::test {

constexpr std::uint64_t kSeed = 0x5eed'2024'c0de'0001ULL;

// ---- Status checks ---------------------------------------------------------------------------

inline const char* code_name(StatusCode c) {
  switch (c) {
    case StatusCode::ok: return "ok";
    case StatusCode::invalid_argument: return "invalid_argument";
    case StatusCode::out_of_memory: return "out_of_memory";
    case StatusCode::device_out_of_memory: return "device_out_of_memory";
    case StatusCode::cuda_error: return "cuda_error";
    case StatusCode::io_error: return "io_error";
    case StatusCode::corrupt_data: return "corrupt_data";
    case StatusCode::unavailable: return "unavailable";
    case StatusCode::cancelled: return "cancelled";
  }
  return "?";
}

inline ::testing::AssertionResult IsOk(const Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << code_name(s.code()) << ": " << s.message();
}
template <class T>
::testing::AssertionResult IsOk(const Result<T>& r) {
  return IsOk(r.ok() ? Status{} : r.status());
}

inline ::testing::AssertionResult HasCode(const Status& s, StatusCode expected) {
  if (s.code() == expected) return ::testing::AssertionSuccess() << s.message();
  return ::testing::AssertionFailure() << "expected " << code_name(expected) << ", got " << code_name(s.code())
                                       << (s.message().empty() ? "" : ": " + s.message());
}
template <class T>
::testing::AssertionResult HasCode(const Result<T>& r, StatusCode expected) {
  return HasCode(r.ok() ? Status{} : r.status(), expected);
}

// Compares two answer vectors and reports the number of mismatches and the first one, with the
// query that produced it (`describe(i)`), instead of flooding the log.
template <class T, class Describe>
::testing::AssertionResult SameAnswers(const std::vector<T>& expected, const std::vector<T>& got, Describe describe) {
  if (expected.size() != got.size()) {
    return ::testing::AssertionFailure() << "expected " << expected.size() << " answers, got " << got.size();
  }
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != got[i] && wrong++ == 0) first = i;
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << wrong << " of " << expected.size() << " answers wrong; first: query " << first
                                       << " (" << describe(first) << ") expected " << +expected[first] << ", got "
                                       << +got[first];
}

// ---- Bits ---------------------------------------------------------------------------------------

// A bit vector as the tests see it: one bool per position, packed on demand.
struct Bits {
  std::vector<bool> bit;

  std::uint64_t size() const { return bit.size(); }
  std::vector<std::uint32_t> words() const {
    std::vector<std::uint32_t> w((bit.size() + 31) / 32 + 1, 0);  // one spare word: never read
    for (std::uint64_t i = 0; i < bit.size(); ++i) {
      if (bit[i]) w[i / 32] |= std::uint32_t{1} << (i % 32);
    }
    return w;
  }
};

// Naive reference: prefix counts by a loop and the positions of the ones and the zeros.
class BitsReference {
 public:
  explicit BitsReference(const Bits& b) : bits_(b.bit), prefix_ones_(b.size() + 1, 0) {
    for (std::uint64_t i = 0; i < b.size(); ++i) {
      prefix_ones_[i + 1] = prefix_ones_[i] + (b.bit[i] ? 1 : 0);
      (b.bit[i] ? ones_ : zeros_).push_back(i);
    }
  }
  std::uint64_t size() const { return bits_.size(); }
  std::uint64_t ones() const { return ones_.size(); }
  std::uint64_t zeros() const { return zeros_.size(); }
  std::uint64_t rank1(std::uint64_t i) const { return prefix_ones_[i]; }
  std::uint64_t rank0(std::uint64_t i) const { return i - prefix_ones_[i]; }
  std::uint64_t select1(std::uint64_t k) const { return ones_[k - 1]; }
  std::uint64_t select0(std::uint64_t k) const { return zeros_[k - 1]; }
  std::uint8_t access(std::uint64_t i) const { return bits_[i] ? 1 : 0; }

 private:
  std::vector<bool> bits_;
  std::vector<std::uint64_t> prefix_ones_, ones_, zeros_;
};

// Each bit set with probability `percent` / 100.
inline Bits uniform_bits(std::uint64_t n, double percent, std::mt19937_64& rng) {
  Bits b{std::vector<bool>(n)};
  std::bernoulli_distribution one(percent / 100.0);
  for (std::uint64_t i = 0; i < n; ++i) b.bit[i] = percent >= 100 ? true : (percent > 0 && one(rng));
  return b;
}

// Kurpicz's adversarial input: about 99 % of the ones in the last `tail_percent` % of the vector,
// so that the select samples crowd into its end and the front has long stretches of zeros.
inline Bits adversarial_bits(std::uint64_t n, double tail_percent, std::mt19937_64& rng) {
  Bits b{std::vector<bool>(n)};
  const auto tail_begin = static_cast<std::uint64_t>(static_cast<double>(n) * (1.0 - tail_percent / 100.0));
  std::bernoulli_distribution tail_one(0.99), head_one(0.0001 * tail_percent);
  for (std::uint64_t i = 0; i < n; ++i) b.bit[i] = i >= tail_begin ? tail_one(rng) : head_one(rng);
  return b;
}

// Sorted, de-duplicated positions to query in [0, limit): the edges, every multiple of `block`
// +-1, and `random` random ones; every position when `limit` is small.
inline std::vector<std::uint64_t> query_positions(std::uint64_t limit, std::uint64_t block, std::size_t random,
                                                  std::mt19937_64& rng) {
  std::vector<std::uint64_t> p;
  if (limit == 0) return p;
  if (limit <= 2048) {
    for (std::uint64_t i = 0; i < limit; ++i) p.push_back(i);
    return p;
  }
  for (std::uint64_t b = 0; b <= limit; b += block) {
    for (std::uint64_t q : {b - 1, b, b + 1}) {
      if (q < limit) p.push_back(q);  // b - 1 wraps for b == 0 and is dropped
    }
  }
  p.push_back(limit - 1);
  std::uniform_int_distribution<std::uint64_t> any(0, limit - 1);
  for (std::size_t j = 0; j < random; ++j) p.push_back(any(rng));
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

// ---- Texts ----------------------------------------------------------------------------------

// Per-symbol occurrence lists: rank = lower_bound in the list, select = list[k - 1].
template <class Symbol>
class TextReference {
 public:
  explicit TextReference(const std::vector<Symbol>& text) : text_(text) {
    for (std::uint64_t i = 0; i < text.size(); ++i) occ_[text[i]].push_back(i);
  }
  Symbol access(std::uint64_t i) const { return text_[i]; }
  std::uint64_t rank(Symbol c, std::uint64_t i) const {
    const auto it = occ_.find(c);
    if (it == occ_.end()) return 0;
    return static_cast<std::uint64_t>(std::lower_bound(it->second.begin(), it->second.end(), i) - it->second.begin());
  }
  std::uint64_t select(Symbol c, std::uint64_t k) const { return occ_.at(c)[k - 1]; }
  std::uint64_t count(Symbol c) const {
    const auto it = occ_.find(c);
    return it == occ_.end() ? 0 : it->second.size();
  }
  // Distinct symbols of the text, sorted.
  std::vector<Symbol> symbols() const {
    std::vector<Symbol> s;
    for (const auto& [c, list] : occ_) s.push_back(c);
    return s;
  }

 private:
  const std::vector<Symbol>& text_;
  std::map<Symbol, std::vector<std::uint64_t>> occ_;
};

// Symbol value of minimal symbol c among `sigma` when the alphabet is extracted: sparse values
// (c * 7 + 3 where they fit), so that a missing mapping would give wrong answers.
template <class Symbol>
Symbol sparse_symbol(std::uint64_t c, std::uint64_t sigma) {
  const std::uint64_t max = std::numeric_limits<Symbol>::max();
  const std::uint64_t stride = std::min<std::uint64_t>(7, (max + 1) / sigma);
  const std::uint64_t offset = std::min<std::uint64_t>(3, max - stride * (sigma - 1));
  return static_cast<Symbol>(offset + stride * c);
}

// A text of n symbols over minimal symbols [0, sigma), mapped through `symbol_of`. With `hole`
// (and sigma >= 3) minimal symbol sigma / 2 never occurs. Every other symbol occurs when n leaves
// room for all of them; otherwise at least the largest (at position 0) and the smallest (at n - 1).
template <class Symbol, class SymbolOf>
std::vector<Symbol> random_text(std::uint64_t n, std::uint64_t sigma, bool hole, SymbolOf symbol_of,
                                std::mt19937_64& rng) {
  const std::uint64_t missing = hole && sigma >= 3 ? sigma / 2 : sigma;
  std::vector<std::uint64_t> minimal(n);
  std::uniform_int_distribution<std::uint64_t> any(0, sigma - 1);
  for (auto& m : minimal) {
    do m = any(rng); while (m == missing);
  }
  const std::uint64_t occurring = sigma - (missing < sigma ? 1 : 0);
  if (n >= occurring) {  // each occurring symbol once at a random position
    std::vector<std::uint64_t> where(n);
    for (std::uint64_t i = 0; i < n; ++i) where[i] = i;
    std::shuffle(where.begin(), where.end(), rng);
    std::uint64_t j = 0;
    for (std::uint64_t m = 0; m < sigma; ++m) {
      if (m != missing) minimal[where[j++]] = m;
    }
  } else if (n >= 2) {
    minimal[0] = sigma - 1;
    minimal[n - 1] = 0;
  }
  std::vector<Symbol> text(n);
  for (std::uint64_t i = 0; i < n; ++i) text[i] = symbol_of(minimal[i]);
  return text;
}

}  // namespace wtmap::test
