// The behavioural contract of WaveletTree<Symbol> / WaveletTreeView<Symbol>, written once and
// instantiated per configuration: a driver (batch_drivers.hpp, view_drivers.cuh) and a symbol type.
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Name, WaveletTreeContract, ::testing::Types<WtCase<D, S>...>, DriverNames);
//
// Expectations come from TextReference (per-symbol occurrence lists) only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "reference.hpp"
#include "support.hpp"
#include "wtmap/core/wavelet_tree.hpp"

namespace wtmap::test {

// One configuration of the contract: a driver, a symbol type and the arity of the levels (2:
// binary, the thesis' tree; 4: quad vectors).
template <class Driver, class Symbol, unsigned Arity = 2>
struct WtCase {
  using D = Driver;
  using S = Symbol;
  using Tree = WaveletTree<Symbol, Arity>;
  static constexpr unsigned kArity = Arity;
  static std::string name() {
    return D::name() + "_u" + std::to_string(8 * sizeof(Symbol)) + (Arity == 4 ? "_quad" : "");
  }
};

// WTMAP_TEST_SIZES=small (set by run-compute-sanitizer.sh) keeps a subset of the alphabet sizes
// and lengths, for runs under tools that slow every kernel down a hundredfold.
inline bool small_sizes() {
  const char* v = std::getenv("WTMAP_TEST_SIZES");
  return v != nullptr && std::string(v) == "small";
}
inline const std::vector<std::uint64_t>& alphabet_sizes() {
  static const std::vector<std::uint64_t> all = {1, 2, 3, 4, 5, 6, 7, 8, 16, 25, 64, 243, 256, 1000, 20000, 65536};
  static const std::vector<std::uint64_t> small = {1, 2, 3, 5, 8, 243, 65536};
  return small_sizes() ? small : all;
}
inline const std::vector<std::uint64_t>& text_lengths() {
  static const std::vector<std::uint64_t> all = {1, 31, 32, 33, 511, 512, 513, 65535, 65536, 65537, 3 * 65536 + 17};
  static const std::vector<std::uint64_t> small = {1, 33, 513, 65537};
  return small_sizes() ? small : all;
}
template <class Symbol>
bool fits(std::uint64_t sigma) {
  return sigma - 1 <= std::numeric_limits<Symbol>::max();
}

// Symbols that do not occur in the text, to be tried with rank (0) and select (an error): holes
// inside the alphabet, values between sparse symbols, and values beyond the alphabet.
template <class Symbol>
std::vector<Symbol> absent_symbols(const TextReference<Symbol>& ref, std::uint64_t sigma) {
  const std::uint64_t max = std::numeric_limits<Symbol>::max();
  std::set<std::uint64_t> candidates = {0, 1, 2, sigma / 2, sigma, sigma + 1, max, max - 1};
  for (Symbol c : ref.symbols()) candidates.insert(std::uint64_t{c} + 1);
  std::vector<Symbol> absent;
  for (std::uint64_t c : candidates) {
    if (c <= max && ref.count(static_cast<Symbol>(c)) == 0 && absent.size() < 8) absent.push_back(static_cast<Symbol>(c));
  }
  return absent;
}

// Up to `limit` of `all`, always keeping the first and the last.
template <class T>
std::vector<T> sample(const std::vector<T>& all, std::size_t limit, std::mt19937_64& rng) {
  if (all.size() <= limit) return all;
  std::vector<T> s = {all.front(), all.back()};
  std::uniform_int_distribution<std::size_t> any(0, all.size() - 1);
  while (s.size() < limit) s.push_back(all[any(rng)]);
  return s;
}

// Queries `tree` through driver D and compares with the occurrence lists of `text`.
// `given_sigma` is options.sigma of the build (0: alphabet extracted).
template <class D, class Tree, class Symbol>
void check_wavelet_tree(const Tree& tree, const std::vector<Symbol>& text, std::uint64_t given_sigma,
                        std::mt19937_64& rng) {
  const TextReference<Symbol> ref(text);
  const std::uint64_t n = text.size();
  const std::vector<Symbol> present = ref.symbols();
  ASSERT_EQ(tree.size(), n);
  if (given_sigma == 0) {
    ASSERT_EQ(tree.sigma(), present.size());
    ASSERT_EQ(tree.alphabet(), present);
  } else {
    ASSERT_EQ(tree.sigma(), given_sigma);
  }
  // One level per code bit (binary), or per two bits (quad vectors).
  const unsigned code_bits = bits::ceil_log2(tree.sigma());
  ASSERT_EQ(tree.num_levels(), Tree::kArity == 2 ? code_bits : (code_bits + 1) / 2);

  // access: all positions of small texts, else block edges and random ones.
  const auto positions = query_positions(n, 512, 1000, rng);
  {
    std::vector<Symbol> expected;
    for (std::uint64_t i : positions) expected.push_back(ref.access(i));
    auto got = D::access(tree, positions);
    ASSERT_TRUE(IsOk(got));
    EXPECT_TRUE(SameAnswers(expected, *got, [&](std::size_t j) { return "access(" + std::to_string(positions[j]) + ")"; }));
  }

  // rank: at each position (0 and n included) the symbols before and at it, a random present one,
  // and absent ones; at 0, n and around the first and last occurrence of sampled symbols.
  const std::vector<Symbol> absent = absent_symbols(ref, given_sigma == 0 ? present.size() : given_sigma);
  std::vector<RankQuery<Symbol>> rq;
  std::uniform_int_distribution<std::size_t> any_present(0, present.size() - 1);
  std::size_t absent_turn = 0;
  for (std::uint64_t i : query_positions(n + 1, 512, 1000, rng)) {
    if (i > 0) rq.push_back({i, text[i - 1]});
    if (i < n) rq.push_back({i, text[i]});
    rq.push_back({i, present[any_present(rng)]});
    if (!absent.empty()) rq.push_back({i, absent[absent_turn++ % absent.size()]});
  }
  for (Symbol c : sample(present, 256, rng)) {
    const std::uint64_t first = ref.select(c, 1), last = ref.select(c, ref.count(c));
    for (std::uint64_t i : {std::uint64_t{0}, first, first + 1, last, last + 1, n}) rq.push_back({i, c});
  }
  for (Symbol c : absent) {
    for (std::uint64_t i : {std::uint64_t{0}, n / 2, n}) rq.push_back({i, c});
  }
  {
    std::vector<std::uint64_t> expected;
    for (const auto& q : rq) expected.push_back(ref.rank(q.symbol, q.position));
    auto got = D::rank(tree, rq);
    ASSERT_TRUE(IsOk(got));
    EXPECT_TRUE(SameAnswers(expected, *got, [&](std::size_t j) {
      return "rank(" + std::to_string(+rq[j].symbol) + ", " + std::to_string(rq[j].position) + ")";
    }));
  }

  // select: every k of every symbol in small texts; else the first, last and random k of
  // sampled symbols.
  std::vector<SelectQuery<Symbol>> sq;
  for (Symbol c : n <= 2048 ? present : sample(present, 300, rng)) {
    const std::uint64_t count = ref.count(c);
    if (n <= 2048) {
      for (std::uint64_t k = 1; k <= count; ++k) sq.push_back({k, c});
    } else {
      std::uniform_int_distribution<std::uint64_t> any_k(1, count);
      for (std::uint64_t k : {std::uint64_t{1}, count, any_k(rng), any_k(rng)}) sq.push_back({k, c});
    }
  }
  {
    std::vector<std::uint64_t> expected;
    for (const auto& q : sq) expected.push_back(ref.select(q.symbol, q.k));
    auto got = D::select(tree, sq);
    ASSERT_TRUE(IsOk(got));
    EXPECT_TRUE(SameAnswers(expected, *got, [&](std::size_t j) {
      return "select(" + std::to_string(+sq[j].symbol) + ", " + std::to_string(sq[j].k) + ")";
    }));
  }
}

template <class Case, class Symbol>
void build_and_check(const std::vector<Symbol>& text, std::uint64_t given_sigma, std::mt19937_64& rng) {
  WaveletTreeOptions options;
  options.backend = Case::D::kBackend;
  options.sigma = given_sigma;
  auto tree = Case::Tree::build(text.data(), text.size(), options);
  ASSERT_TRUE(IsOk(tree));
  check_wavelet_tree<typename Case::D>(*tree, text, given_sigma, rng);
}

// ---- The typed contract -----------------------------------------------------------------

template <class Case>
class WaveletTreeContract : public ::testing::Test {
 protected:
  using D = typename Case::D;
  using S = typename Case::S;
  void SetUp() override { WTMAP_SKIP_WITHOUT(D::kBackend); }
  std::mt19937_64 rng{kSeed};
};
TYPED_TEST_SUITE_P(WaveletTreeContract);

// options.sigma = sigma: symbols used as they are, 0..sigma-1, with sigma / 2 left out of the text.
TYPED_TEST_P(WaveletTreeContract, AlphabetGiven) {
  using S = typename TypeParam::S;
  for (std::uint64_t sigma : alphabet_sizes()) {
    if (!fits<S>(sigma)) continue;
    for (std::uint64_t n : text_lengths()) {
      SCOPED_TRACE("alphabet given, sigma = " + std::to_string(sigma) + ", n = " + std::to_string(n));
      const auto text = random_text<S>(n, sigma, true, [](std::uint64_t m) { return static_cast<S>(m); }, this->rng);
      build_and_check<TypeParam>(text, sigma, this->rng);
      if (this->HasFatalFailure()) return;
    }
  }
}

// options.sigma = 0: sparse symbol values (c * 7 + 3 where they fit) mapped to a minimal alphabet.
TYPED_TEST_P(WaveletTreeContract, AlphabetExtracted) {
  using S = typename TypeParam::S;
  for (std::uint64_t sigma : alphabet_sizes()) {
    if (!fits<S>(sigma)) continue;
    for (std::uint64_t n : text_lengths()) {
      SCOPED_TRACE("alphabet extracted, sigma = " + std::to_string(sigma) + ", n = " + std::to_string(n));
      const auto text = random_text<S>(n, sigma, false, [&](std::uint64_t m) { return sparse_symbol<S>(m, sigma); }, this->rng);
      build_and_check<TypeParam>(text, 0, this->rng);
      if (this->HasFatalFailure()) return;
    }
  }
}

// One symbol repeated: the smallest and the largest value of the type, given and extracted.
TYPED_TEST_P(WaveletTreeContract, OneRepeatedSymbol) {
  using S = typename TypeParam::S;
  constexpr S kMax = std::numeric_limits<S>::max();
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{513}, std::uint64_t{65537}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    build_and_check<TypeParam>(std::vector<S>(n, S{0}), 1, this->rng);
    build_and_check<TypeParam>(std::vector<S>(n, S{4}), 5, this->rng);
    build_and_check<TypeParam>(std::vector<S>(n, kMax), 0, this->rng);
    if (std::uint64_t{kMax} + 1 <= TypeParam::Tree::kMaxSigma) {  // every value in the given alphabet
      build_and_check<TypeParam>(std::vector<S>(n, kMax), std::uint64_t{kMax} + 1, this->rng);
    }
  }
}

// Long runs and a skewed distribution: most symbols rare, one symbol almost everywhere.
TYPED_TEST_P(WaveletTreeContract, SkewedText) {
  using S = typename TypeParam::S;
  for (std::uint64_t sigma : {std::uint64_t{5}, std::uint64_t{243}}) {
    const std::uint64_t n = 2 * 65536 + 5;
    std::vector<S> text(n, static_cast<S>(sigma / 3));
    std::uniform_int_distribution<std::uint64_t> any(0, sigma - 1);
    for (std::uint64_t i = 0; i < n; i += 97) text[i] = static_cast<S>(any(this->rng));
    for (std::uint64_t i = n - 600; i < n; ++i) text[i] = static_cast<S>(sigma - 1);
    SCOPED_TRACE("sigma = " + std::to_string(sigma));
    build_and_check<TypeParam>(text, sigma, this->rng);
    build_and_check<TypeParam>(text, 0, this->rng);
  }
}

REGISTER_TYPED_TEST_SUITE_P(WaveletTreeContract, AlphabetGiven, AlphabetExtracted, OneRepeatedSymbol, SkewedText);

// ---- Errors of the host batch API, construction and loading ----------------------------

template <class Case>
class WaveletTreeBatchErrors : public WaveletTreeContract<Case> {
 protected:
  using D = typename Case::D;
  using S = typename Case::S;
  // A text of 100 symbols over {0, 1, 3} (2 is in the alphabet, absent from the text).
  std::vector<S> text() const {
    std::vector<S> t(100);
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<S>(i % 3 == 2 ? 3 : i % 3);
    return t;
  }
  Result<typename Case::Tree> build(const std::vector<S>& t, std::uint64_t sigma) const {
    WaveletTreeOptions options;
    options.backend = D::kBackend;
    options.sigma = sigma;
    return Case::Tree::build(t.data(), t.size(), options);
  }
};
TYPED_TEST_SUITE_P(WaveletTreeBatchErrors);

// Out-of-range queries fail the call with invalid_argument naming the first bad query (index 3,
// before another bad one at 5), for a given (sigma = 4) and an extracted alphabet ({0, 1, 3}).
// Each query kind is a test of its own, so that a crash in one does not hide the others.
TYPED_TEST_P(WaveletTreeBatchErrors, AccessOutOfRange) {
  using D = typename TypeParam::D;
  const std::uint64_t n = this->text().size();
  for (std::uint64_t sigma : {std::uint64_t{4}, std::uint64_t{0}}) {
    auto tree = this->build(this->text(), sigma);
    ASSERT_TRUE(IsOk(tree));
    EXPECT_TRUE(RejectsQuery(D::access(*tree, {0, 1, 2, n, 4, n + 1}), 3));
    EXPECT_TRUE(RejectsQuery(D::access(*tree, {0, 1, 2, ~std::uint64_t{0}, 4, n}), 3));
    auto a = D::access(*tree, {n - 1});  // the tree still answers
    ASSERT_TRUE(IsOk(a));
    EXPECT_EQ(+(*a)[0], +this->text()[n - 1]);
    EXPECT_TRUE(IsOk(D::access(*tree, {})));
  }
}

TYPED_TEST_P(WaveletTreeBatchErrors, RankOutOfRange) {
  using D = typename TypeParam::D;
  using Q = RankQuery<typename TypeParam::S>;
  const std::uint64_t n = this->text().size();
  for (std::uint64_t sigma : {std::uint64_t{4}, std::uint64_t{0}}) {
    auto tree = this->build(this->text(), sigma);
    ASSERT_TRUE(IsOk(tree));
    auto ranks = [](Q bad, Q later_bad) { return std::vector<Q>{{0, 0}, {1, 1}, {100, 3}, bad, {5, 0}, later_bad}; };
    EXPECT_TRUE(RejectsQuery(D::rank(*tree, ranks({n + 1, 0}, {n + 1, 0})), 3));
    EXPECT_TRUE(RejectsQuery(D::rank(*tree, ranks({n + 1, 2}, {n + 2, 1})), 3));  // absent symbol, bad position
    EXPECT_TRUE(RejectsQuery(D::rank(*tree, ranks({~std::uint64_t{0}, 1}, {n + 2, 1})), 3));
  }
}

TYPED_TEST_P(WaveletTreeBatchErrors, SelectOutOfRange) {
  using D = typename TypeParam::D;
  using S = typename TypeParam::S;
  using Q = SelectQuery<S>;
  const TextReference<S> ref(this->text());
  for (std::uint64_t sigma : {std::uint64_t{4}, std::uint64_t{0}}) {
    auto tree = this->build(this->text(), sigma);
    ASSERT_TRUE(IsOk(tree));
    auto selects = [](Q bad, Q later_bad) { return std::vector<Q>{{1, 0}, {2, 1}, {1, 3}, bad, {3, 0}, later_bad}; };
    EXPECT_TRUE(RejectsQuery(D::select(*tree, selects({0, 1}, {0, 1})), 3));
    EXPECT_TRUE(RejectsQuery(D::select(*tree, selects({ref.count(1) + 1, 1}, {0, 0})), 3));
    auto s = D::select(*tree, {{ref.count(3), 3}});  // the tree still answers
    ASSERT_TRUE(IsOk(s));
    EXPECT_EQ(*s, std::vector<std::uint64_t>{ref.select(3, ref.count(3))});
  }
}

TYPED_TEST_P(WaveletTreeBatchErrors, SelectOfAbsentSymbol) {
  using D = typename TypeParam::D;
  using S = typename TypeParam::S;
  using Q = SelectQuery<S>;
  for (std::uint64_t sigma : {std::uint64_t{4}, std::uint64_t{0}}) {
    auto tree = this->build(this->text(), sigma);
    ASSERT_TRUE(IsOk(tree));
    auto selects = [](Q bad, Q later_bad) { return std::vector<Q>{{1, 0}, {2, 1}, {1, 3}, bad, {3, 0}, later_bad}; };
    EXPECT_TRUE(RejectsQuery(D::select(*tree, selects({1, 2}, {1, 2})), 3));  // in the given alphabet, not the text
    EXPECT_TRUE(RejectsQuery(D::select(*tree, selects({1, 4}, {0, 0})), 3));  // outside the alphabet
    EXPECT_TRUE(RejectsQuery(D::select(*tree, selects({1, std::numeric_limits<S>::max()}, {0, 0})), 3));
  }
}

TYPED_TEST_P(WaveletTreeBatchErrors, RankOfAbsentSymbolIsZero) {
  using D = typename TypeParam::D;
  using S = typename TypeParam::S;
  const TextReference<S> ref(this->text());
  const std::uint64_t n = this->text().size();
  for (std::uint64_t sigma : {std::uint64_t{4}, std::uint64_t{0}}) {
    auto tree = this->build(this->text(), sigma);
    ASSERT_TRUE(IsOk(tree));
    const std::vector<RankQuery<S>> absent = {{0, 2}, {50, 2}, {n, 2}, {n, 4}, {n, std::numeric_limits<S>::max()}, {n, 3}};
    auto r = D::rank(*tree, absent);
    ASSERT_TRUE(IsOk(r));
    EXPECT_EQ(*r, (std::vector<std::uint64_t>{0, 0, 0, 0, 0, ref.count(3)}));
  }
}

// options.sigma must exceed every symbol of the text, and fit the symbol type.
TYPED_TEST_P(WaveletTreeBatchErrors, BuildRejectsSymbolsOutsideTheGivenAlphabet) {
  using S = typename TypeParam::S;
  const auto t = this->text();  // largest symbol 3
  EXPECT_TRUE(HasCode(this->build(t, 3), StatusCode::invalid_argument));
  EXPECT_TRUE(HasCode(this->build(t, 1), StatusCode::invalid_argument));
  EXPECT_TRUE(HasCode(this->build({S{0}, S{1}, std::numeric_limits<S>::max()}, 2), StatusCode::invalid_argument));
  EXPECT_TRUE(IsOk(this->build(t, 4)));
  const std::uint64_t too_large = std::uint64_t{std::numeric_limits<S>::max()} + 2;
  if (sizeof(S) < 4) {
    EXPECT_TRUE(HasCode(this->build(t, too_large), StatusCode::invalid_argument));
  }
}

TYPED_TEST_P(WaveletTreeBatchErrors, CorruptStreamsAreRejected) {
  using S = typename TypeParam::S;
  using D = typename TypeParam::D;
  // A bigger alphabet than text() so that levels, histogram and node tables are all non-trivial.
  std::mt19937_64& rng = this->rng;
  const auto t = random_text<S>(700, 6, false, [](std::uint64_t m) { return static_cast<S>(m * 5 + 1); }, rng);
  auto tree = this->build(t, 0);
  ASSERT_TRUE(IsOk(tree));
  const std::string good = saved_bytes(*tree);
  using Tree = typename TypeParam::Tree;
  constexpr unsigned kArity = TypeParam::kArity;
  expect_corrupt_streams_rejected<Tree>(good, D::kBackend);

  // A stream of another symbol width, or of the other arity: load it as each.
  using Other1 = std::conditional_t<sizeof(S) == 1, std::uint16_t, std::uint8_t>;
  using Other2 = std::conditional_t<sizeof(S) == 4, std::uint16_t, std::uint32_t>;
  EXPECT_TRUE(HasCode(load_bytes<WaveletTree<Other1, kArity>>(good, D::kBackend), StatusCode::corrupt_data));
  EXPECT_TRUE(HasCode(load_bytes<WaveletTree<Other2, kArity>>(good, D::kBackend), StatusCode::corrupt_data));
  EXPECT_TRUE(HasCode(load_bytes<WaveletTree<S, 6 - kArity>>(good, D::kBackend), StatusCode::corrupt_data));
  // Header: magic, version, arity (offset 16), symbol width (24), n (32). A patched arity or
  // width field is caught, and so is an n that disagrees with the stored histogram.
  EXPECT_TRUE(HasCode(load_bytes<Tree>(with_u64(good, 16, 3), D::kBackend), StatusCode::corrupt_data));
  EXPECT_TRUE(HasCode(load_bytes<Tree>(with_u64(good, 24, 8), D::kBackend), StatusCode::corrupt_data));
  EXPECT_TRUE(HasCode(load_bytes<Tree>(with_u64(good, 32, t.size() + 1), D::kBackend), StatusCode::corrupt_data));
}

REGISTER_TYPED_TEST_SUITE_P(WaveletTreeBatchErrors, AccessOutOfRange, RankOutOfRange, SelectOutOfRange,
                            SelectOfAbsentSymbol, RankOfAbsentSymbolIsZero,
                            BuildRejectsSymbolsOutsideTheGivenAlphabet, CorruptStreamsAreRejected);

}  // namespace wtmap::test
