#include "wtmap/core/wavelet_tree.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstring>
#include <istream>
#include <ostream>
#include <string>
#include <type_traits>

#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "quad_vector_build.hpp"
#include "rank_select_build.hpp"
#include "serialize.hpp"
#include "support_check.hpp"

namespace wtmap {

// Byte offsets of everything a tree keeps in its single allocation, each on a 128-byte line.
template <class Symbol, unsigned Arity>
struct WaveletTree<Symbol, Arity>::Layout {
  static constexpr unsigned kCountsPerLevel = Arity == 2 ? 1 : 4;  // ones, or the four totals
  std::vector<std::uint64_t> level_size;    // symbols (bits) per level
  std::vector<std::uint64_t> level_offset;
  std::uint64_t cumulative_offset = 0, node_offset = 0, alphabet_offset = 0;
  std::uint64_t num_nodes = 0, total = 0;

  Layout(std::vector<std::uint64_t> sizes, std::uint64_t sigma, bool has_alphabet) : level_size(std::move(sizes)) {
    auto take = [&](std::uint64_t bytes) {
      const std::uint64_t at = total;
      total += bits::round_up(bytes, RankSelectLayout::kAlignment);
      return at;
    };
    for (std::uint64_t s : level_size) {
      level_offset.push_back(take(Arity == 2 ? RankSelectLayout::total_bytes(s) : QuadVectorLayout::total_bytes(s)));
    }
    const std::uint64_t levels = level_size.size();
    // Binary: node start and rank0 per heap node; 4-ary: four digit ranks per heap node.
    num_nodes = Arity == 2 ? (std::uint64_t{1} << levels) - 1 : ((std::uint64_t{1} << (2 * levels)) - 1) / 3;
    cumulative_offset = take((sigma + 1) * 8);
    node_offset = take(num_nodes * (Arity == 2 ? 2 : 4) * 8);
    alphabet_offset = take(has_alphabet ? sigma * sizeof(Symbol) : 0);
  }
};

namespace {

constexpr unsigned kHistogramThreads = 256;
constexpr char kMagic[8] = {'W', 'T', 'M', 'W', 'T', 'R', 'E', 'E'};

template <unsigned Arity>
unsigned levels_for_sigma(std::uint64_t sigma) {
  const unsigned bits_needed = bits::ceil_log2(sigma);
  return Arity == 2 ? bits_needed : (bits_needed + 1) / 2;
}

// Bits in each level: level l holds the symbols whose code is longer than l.
std::vector<std::uint64_t> level_sizes_from_histogram(const std::vector<std::uint64_t>& hist, std::uint64_t sigma,
                                                      unsigned num_levels) {
  std::vector<std::uint64_t> sizes(num_levels, 0);
  for (std::uint64_t m = 0; m < sigma; ++m) {
    const unsigned len = encode_symbol(m, sigma, num_levels).length;
    for (unsigned l = 0; l < len; ++l) sizes[l] += hist[m];
  }
  return sizes;
}

// Start of heap node h in its level and the level's rank0 there (zeros for non-nodes).
template <class Symbol>
WTMAP_HD void node_table_entry(const WaveletTreeView<Symbol>& v, std::uint64_t h, std::uint64_t* start,
                               std::uint64_t* rank0) {
  const NodeRange r = node_range(h, v.sigma);
  if (r.first == r.last) {
    start[h] = rank0[h] = 0;
    return;
  }
  start[h] = v.cumulative[r.first];
  rank0[h] = v.levels[r.depth].rank0(start[h]);
}

// ---- Construction steps of one element, shared by both backends (detail::for_each_index) ------

template <class Symbol>
struct MapToMinimal {
  WaveletTreeView<Symbol> mapping;  // sigma and the sorted alphabet, on the backend
  Symbol* text;
  WTMAP_HD void operator()(std::uint64_t i) const {
    std::uint64_t m = 0;
    mapping.to_minimal(text[i], m);
    text[i] = static_cast<Symbol>(m);
  }
};

// Level packing for either arity: word w of a binary level is 32 bits at its natural place;
// word w of a quad level holds 32 digits in block w / 7.
template <unsigned Arity>
struct LevelPacking {
  static constexpr unsigned kSymbolsPerWord = 32;
  static constexpr unsigned kDigitBits = Arity == 2 ? 1 : 2;
  template <class Symbol>
  static WTMAP_HD void pack(const Symbol* codes, std::uint64_t count, unsigned shift, std::byte* level, std::uint64_t w) {
    if constexpr (Arity == 2) {
      reinterpret_cast<std::uint32_t*>(level)[w] = pack_level_word(codes, count, shift, w);
    } else {
      reinterpret_cast<QuadBlock*>(level)[w / QuadVectorLayout::kWordsPerBlock].words[w % QuadVectorLayout::kWordsPerBlock] =
          pack_quad_word(codes, count, shift, w);
    }
  }
};

template <unsigned Arity, class Symbol>
struct PackLevel {
  const Symbol* codes;  // sorted by the digits above `shift`
  std::uint64_t count;
  unsigned shift;
  std::byte* level;
  WTMAP_HD void operator()(std::uint64_t w) const { LevelPacking<Arity>::pack(codes, count, shift, level, w); }
};

// Per-node tables of either arity: binary trees keep node starts then rank0s, 4-ary trees four
// digit ranks per node.
template <class Symbol>
WTMAP_HD void node_tables_entry(const WaveletTreeView<Symbol, 2>& v, std::uint64_t h, std::uint64_t* tables,
                                std::uint64_t num_nodes) {
  node_table_entry(v, h, tables, tables + num_nodes);
}
template <class Symbol>
WTMAP_HD void node_tables_entry(const WaveletTreeView<Symbol, 4>& v, std::uint64_t h, std::uint64_t* tables,
                                std::uint64_t) {
  quad_node_table_entry(v, h, tables);
}

template <class View>
struct NodeTables {
  View v;
  std::uint64_t* tables;
  std::uint64_t num_nodes;
  WTMAP_HD void operator()(std::uint64_t h) const { node_tables_entry(v, h, tables, num_nodes); }
};

// ---- The stages whose algorithms differ: a builder per backend ----------------------------
// Each holds the text on its backend while the tree is built and offers the same stages:
// load, distinct_symbols (sorted, on the host and on the backend), check_below, histogram (which
// also encodes the minimal symbols for binary trees), and sort_from (a stable sort by the code
// bits from begin_bit up, given the codes sorted by the bits one digit higher). codes() is the
// text in its current order, for the shared steps.

// Turns codes sorted by the bits above `shift` into codes sorted by the bits above
// shift - digit_bits (stable), by a stable counting sort of every run of equal prefixes on the
// digit below it: what a radix sort over the longer prefix produces, in O(n).
template <class Symbol>
void refine_sort_cpu(const std::vector<Symbol>& in, std::vector<Symbol>& out, unsigned shift, unsigned digit_bits) {
  const unsigned low = shift - digit_bits;
  const unsigned radix = 1u << digit_bits;
  const std::uint64_t n = in.size();
  std::uint64_t begin = 0;
  while (begin < n) {
    const std::uint64_t prefix = static_cast<std::uint64_t>(in[begin]) >> shift;
    std::uint64_t end = begin, next[4] = {0, 0, 0, 0};
    for (; end < n && (static_cast<std::uint64_t>(in[end]) >> shift) == prefix; ++end) ++next[(in[end] >> low) & (radix - 1)];
    for (std::uint64_t d = 0, at = begin; d < radix; ++d) {
      const std::uint64_t c = next[d];
      next[d] = at;
      at += c;
    }
    for (std::uint64_t i = begin; i < end; ++i) out[next[(in[i] >> low) & (radix - 1)]++] = in[i];
    begin = end;
  }
}

// The text in host memory. Space: two copies of the text (2 n symbols). Each level's sort is a
// stable counting refinement of the previous level's order, O(n); the histogram one pass.
template <class Symbol>
class CpuTreeBuilder {
 public:
  static constexpr Backend kBackend = Backend::cpu;

  Status load(const Symbol* text, std::uint64_t n) {
    codes_.assign(text, text + n);
    return {};
  }
  Symbol* codes() { return codes_.data(); }

  Status distinct_symbols(std::vector<Symbol>& alphabet, const Symbol*& on_backend) {
    alphabet = codes_;
    std::sort(alphabet.begin(), alphabet.end());
    alphabet.erase(std::unique(alphabet.begin(), alphabet.end()), alphabet.end());
    on_backend = alphabet.data();
    return {};
  }

  Status check_below(std::uint64_t sigma) const {
    const auto it = std::find_if(codes_.begin(), codes_.end(), [&](Symbol c) { return c >= sigma; });
    if (it == codes_.end()) return {};
    return invalid_argument("text position " + std::to_string(it - codes_.begin()) + " holds symbol " +
                            std::to_string(static_cast<std::uint64_t>(*it)) + ", not below sigma = " + std::to_string(sigma));
  }

  Status histogram(std::uint64_t sigma, unsigned num_levels, bool encode, std::vector<std::uint64_t>& hist) {
    for (Symbol& c : codes_) {
      const std::uint64_t m = c;
      ++hist[m];
      if (encode) c = static_cast<Symbol>(encode_symbol(m, sigma, num_levels).code);
    }
    return {};
  }

  Status sort_from(unsigned begin_bit, unsigned digit_bits, unsigned /*code_bits*/) {
    alt_.resize(codes_.size());
    refine_sort_cpu(codes_, alt_, begin_bit + digit_bits, digit_bits);
    codes_.swap(alt_);
    return {};
  }

 private:
  std::vector<Symbol> codes_, alt_;
};

Result<Buffer> cub_temp(std::size_t bytes) { return Buffer::allocate(Backend::gpu, bytes, "CUB temporary storage"); }

// Histogram with per-block sub-histograms in shared memory, replicated so that threads of a
// warp rarely share one, on a persistent grid (thesis 5.1.1); encodes the text in place. (The one
// construction kernel of its own: its blocks share memory, which for_each_index's do not.)
template <class Symbol>
__global__ void __launch_bounds__(kHistogramThreads)
    histogram_encode_kernel(Symbol* text, std::uint64_t n, std::uint64_t sigma, unsigned num_levels,
                            bool encode, unsigned long long* hist, unsigned replicas) {
  extern __shared__ unsigned int local[];
  const bool shared = replicas > 0;
  if (shared) {
    for (std::uint64_t j = threadIdx.x; j < sigma * replicas; j += blockDim.x) local[j] = 0;
    __syncthreads();
  }
  unsigned int* mine = shared ? local + (threadIdx.x % replicas) * sigma : nullptr;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t m = text[i];
    if (shared) atomicAdd(mine + m, 1u); else atomicAdd(hist + m, 1ull);
    if (encode) text[i] = static_cast<Symbol>(encode_symbol(m, sigma, num_levels).code);
  }
  if (shared) {
    __syncthreads();
    for (std::uint64_t c = threadIdx.x; c < sigma; c += blockDim.x) {
      unsigned long long total = 0;
      for (unsigned r = 0; r < replicas; ++r) total += local[r * sigma + c];
      if (total != 0) atomicAdd(hist + c, total);
    }
  }
}

// The text in device memory, in two buffers that CUB's radix sort alternates between. Space: 2 n
// symbols plus CUB's temporary storage (and n symbols while the alphabet is extracted). Each
// level's sort is a stable CUB radix sort of the codes by their leading bits, O(n) per radix
// pass; the histogram is the thesis' (5.1.1), one pass.
template <class Symbol>
class GpuTreeBuilder {
 public:
  static constexpr Backend kBackend = Backend::gpu;

  Status load(const Symbol* text, std::uint64_t n) {
    n_ = n;
    auto codes = Buffer::allocate(Backend::gpu, n * sizeof(Symbol), "wavelet tree construction (text)");
    if (!codes.ok()) return codes.status();
    codes_ = std::move(codes.value());
    auto alt = Buffer::allocate(Backend::gpu, n * sizeof(Symbol), "wavelet tree construction (sort buffer)");
    if (!alt.ok()) return alt.status();
    alt_ = std::move(alt.value());
    keys_ = cub::DoubleBuffer<Symbol>(reinterpret_cast<Symbol*>(codes_.data()), reinterpret_cast<Symbol*>(alt_.data()));
    return codes_.copy_from_host(0, text, n * sizeof(Symbol));
  }
  Symbol* codes() { return keys_.Current(); }

  // A sorted copy, its distinct symbols (kept on the device for the mapping), their count.
  Status distinct_symbols(std::vector<Symbol>& alphabet, const Symbol*& on_backend) {
    alphabet.clear();
    on_backend = nullptr;
    if (n_ == 0) return {};
    Symbol* text = keys_.Current();
    Symbol* sorted = keys_.Alternate();
    std::size_t sort_bytes = 0, unique_bytes = 0;
    WTMAP_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, text, sorted, n_));
    auto distinct = Buffer::allocate(Backend::gpu, n_ * sizeof(Symbol) + sizeof(std::uint64_t), "alphabet extraction");
    if (!distinct.ok()) return distinct.status();
    distinct_ = std::move(distinct.value());
    auto* d_count = reinterpret_cast<std::uint64_t*>(distinct_.data());
    auto* d_distinct = reinterpret_cast<Symbol*>(distinct_.data() + sizeof(std::uint64_t));
    WTMAP_CUDA_TRY(cub::DeviceSelect::Unique(nullptr, unique_bytes, sorted, d_distinct, d_count, n_));
    auto temp = cub_temp(std::max(sort_bytes, unique_bytes));
    if (!temp.ok()) return temp.status();
    WTMAP_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp->data(), sort_bytes, text, sorted, n_));
    WTMAP_CUDA_TRY(cub::DeviceSelect::Unique(temp->data(), unique_bytes, sorted, d_distinct, d_count, n_));
    std::uint64_t sigma = 0;
    WTMAP_CUDA_TRY(cudaMemcpy(&sigma, d_count, sizeof sigma, cudaMemcpyDeviceToHost));
    alphabet.resize(sigma);
    WTMAP_CUDA_TRY(cudaMemcpy(alphabet.data(), d_distinct, sigma * sizeof(Symbol), cudaMemcpyDeviceToHost));
    on_backend = d_distinct;
    return {};
  }

  Status check_below(std::uint64_t sigma) {
    if (n_ == 0) return {};
    std::size_t bytes = 0;
    auto max_buf = Buffer::allocate(Backend::gpu, sizeof(Symbol), "maximum symbol");
    if (!max_buf.ok()) return max_buf.status();
    auto* d_max = reinterpret_cast<Symbol*>(max_buf->data());
    WTMAP_CUDA_TRY(cub::DeviceReduce::Max(nullptr, bytes, keys_.Current(), d_max, n_));
    auto temp = cub_temp(bytes);
    if (!temp.ok()) return temp.status();
    WTMAP_CUDA_TRY(cub::DeviceReduce::Max(temp->data(), bytes, keys_.Current(), d_max, n_));
    Symbol max_symbol{};
    WTMAP_CUDA_TRY(cudaMemcpy(&max_symbol, d_max, sizeof max_symbol, cudaMemcpyDeviceToHost));
    if (max_symbol < sigma) return {};
    return invalid_argument("the text holds symbol " + std::to_string(static_cast<std::uint64_t>(max_symbol)) +
                            ", not below sigma = " + std::to_string(sigma));
  }

  Status histogram(std::uint64_t sigma, unsigned num_levels, bool encode, std::vector<std::uint64_t>& hist) {
    if (n_ == 0) return {};
    auto d_hist_buf = Buffer::allocate(Backend::gpu, sigma * sizeof(std::uint64_t), "histogram");
    if (!d_hist_buf.ok()) return d_hist_buf.status();
    auto* d_hist = reinterpret_cast<unsigned long long*>(d_hist_buf->data());
    constexpr std::size_t kSharedBytes = 48 * 1024;
    const unsigned replicas = static_cast<unsigned>(std::min<std::uint64_t>(32, kSharedBytes / (sigma * 4)));
    const int grid = detail::multiprocessor_count() * 8;
    histogram_encode_kernel<Symbol><<<grid, kHistogramThreads, replicas * sigma * 4>>>(
        keys_.Current(), n_, sigma, num_levels, encode, d_hist, replicas);
    WTMAP_CUDA_TRY_LAUNCH();
    return d_hist_buf->copy_to_host(0, hist.data(), sigma * sizeof(std::uint64_t));
  }

  // CUB's radix sort over the bits [begin_bit, code_bits): stable, so from the previous level's
  // order it gives the same order as the CPU's refinement.
  Status sort_from(unsigned begin_bit, unsigned /*digit_bits*/, unsigned code_bits) {
    if (n_ == 0) return {};
    if (sort_temp_.data() == nullptr) {
      WTMAP_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes_, keys_, n_, 0, static_cast<int>(code_bits)));
      auto temp = cub_temp(sort_bytes_);
      if (!temp.ok()) return temp.status();
      sort_temp_ = std::move(temp.value());
    }
    WTMAP_CUDA_TRY(cub::DeviceRadixSort::SortKeys(sort_temp_.data(), sort_bytes_, keys_, n_, static_cast<int>(begin_bit),
                                                  static_cast<int>(code_bits)));
    return {};
  }

 private:
  std::uint64_t n_ = 0;
  Buffer codes_, alt_, distinct_, sort_temp_;
  cub::DoubleBuffer<Symbol> keys_;
  std::size_t sort_bytes_ = 0;
};

// ---- The stages, the same on either backend ------------------------------------------------

// Stage 1: the text on the builder's backend, mapped to the minimal alphabet; sigma and, when
// extracted, the alphabet.
template <class Builder, class Symbol>
Status map_text(Builder& builder, const Symbol* text, std::uint64_t n, bool extract, std::uint64_t& sigma,
                std::vector<Symbol>& alphabet) {
  WTMAP_TRY(builder.load(text, n));
  if (!extract) return builder.check_below(sigma);
  const Symbol* on_backend = nullptr;
  WTMAP_TRY(builder.distinct_symbols(alphabet, on_backend));
  sigma = alphabet.size();
  WaveletTreeView<Symbol> mapping{};
  mapping.sigma = sigma;
  mapping.alphabet = on_backend;
  return detail::for_each_index(Builder::kBackend, n, MapToMinimal<Symbol>{mapping, builder.codes()});
}

// Stage 4: each level's digits packed from the codes sorted by the digits above them, and the
// level's rank/select support. Fills the level counts (ones, or four totals, per level).
template <unsigned Arity, class Builder, class Layout>
Status build_levels(Builder& builder, const Layout& layout, std::byte* storage, unsigned code_bits,
                    std::vector<std::uint64_t>& level_counts) {
  using Packing = LevelPacking<Arity>;
  using Symbol = std::remove_pointer_t<decltype(builder.codes())>;
  const auto num_levels = static_cast<unsigned>(layout.level_size.size());
  for (unsigned l = 0; l < num_levels; ++l) {
    std::byte* level_base = storage + layout.level_offset[l];
    const std::uint64_t count = layout.level_size[l];
    const unsigned shift = code_bits - (l + 1) * Packing::kDigitBits;  // this level's digit
    if (l > 0) WTMAP_TRY(builder.sort_from(shift + Packing::kDigitBits, Packing::kDigitBits, code_bits));
    const std::uint64_t num_words = bits::ceil_div<std::uint64_t>(count, Packing::kSymbolsPerWord);
    WTMAP_TRY(detail::for_each_index(Builder::kBackend, num_words,
                                     PackLevel<Arity, Symbol>{builder.codes(), count, shift, level_base}));
    if constexpr (Arity == 2) {
      RankSelectView level;
      WTMAP_TRY(detail::build_rank_select(Builder::kBackend, level_base, count, level));
      level_counts[l] = level.ones;
    } else {
      QuadVectorView level;
      WTMAP_TRY(detail::build_quad_vector(Builder::kBackend, level_base, count, level));
      for (unsigned c = 0; c < 4; ++c) level_counts[4 * l + c] = level.totals[c];
    }
  }
  return {};
}

template <class Query>
std::string symbol_text(const Query& q) { return std::to_string(static_cast<std::uint64_t>(q.symbol)); }

// ---- Query operations (batch.cuh) ---------------------------------------------------------

template <class Symbol, class View>
struct AccessOp {
  using In = std::uint64_t;
  using Out = Symbol;
  View v;
  WTMAP_HD bool valid(In i) const { return i < v.size; }
  WTMAP_HD Out operator()(In i) const { return v.access(i); }
  std::string why_invalid(In i) const {
    return "position " + std::to_string(i) + " is not below the text length " + std::to_string(v.size);
  }
};

template <class Symbol, class View>
struct RankOp {
  using In = RankQuery<Symbol>;
  using Out = std::uint64_t;
  View v;
  WTMAP_HD bool valid(const In& q) const { return q.position <= v.size; }
  WTMAP_HD Out operator()(const In& q) const { return v.rank(q.symbol, q.position); }
  std::string why_invalid(const In& q) const {
    return "position " + std::to_string(q.position) + " is past the text length " + std::to_string(v.size);
  }
};

template <class Symbol, class View>
struct SelectOp {
  using In = SelectQuery<Symbol>;
  using Out = std::uint64_t;
  View v;
  WTMAP_HD bool valid(const In& q) const { return q.k >= 1 && q.k <= v.count(q.symbol); }
  WTMAP_HD Out operator()(const In& q) const { return v.select(q.symbol, q.k); }
  // Host-side message: the view's tables may live on the GPU, so nothing of it is read here.
  std::string why_invalid(const In& q) const {
    return "symbol " + symbol_text(q) + " has no occurrence number k = " + std::to_string(q.k) +
           " (k must lie in [1, occurrences of the symbol])";
  }
};

}  // namespace

#define WTMAP_WT template <class Symbol, unsigned Arity>
#define WTMAP_WT_CLASS WaveletTree<Symbol, Arity>

WTMAP_WT WTMAP_WT_CLASS::WaveletTree() = default;
WTMAP_WT WTMAP_WT_CLASS::WaveletTree(WaveletTree&&) noexcept = default;
WTMAP_WT WTMAP_WT_CLASS& WTMAP_WT_CLASS::operator=(WaveletTree&&) noexcept = default;
WTMAP_WT WTMAP_WT_CLASS::~WaveletTree() = default;

WTMAP_WT
void WTMAP_WT_CLASS::bind_view(const Layout& layout, std::uint64_t n, std::uint64_t sigma, bool has_alphabet,
                               const std::vector<std::uint64_t>& level_counts) {
  const std::byte* base = storage_.data();
  view_ = View{};
  view_.size = n;
  view_.sigma = sigma;
  view_.num_levels = static_cast<unsigned>(layout.level_size.size());
  for (unsigned l = 0; l < view_.num_levels; ++l) {
    if constexpr (Arity == 2) {
      view_.levels[l] = detail::rank_select_view_at(base + layout.level_offset[l], layout.level_size[l], level_counts[l]);
    } else {
      view_.levels[l] = detail::quad_vector_view_at(base + layout.level_offset[l], layout.level_size[l], &level_counts[4 * l]);
    }
  }
  view_.cumulative = reinterpret_cast<const std::uint64_t*>(base + layout.cumulative_offset);
  const auto* tables = reinterpret_cast<const std::uint64_t*>(base + layout.node_offset);
  if constexpr (Arity == 2) {
    view_.node_start = tables;
    view_.node_rank0 = tables + layout.num_nodes;
  } else {
    view_.node_rank = tables;
  }
  view_.alphabet = has_alphabet ? reinterpret_cast<const Symbol*>(base + layout.alphabet_offset) : nullptr;
  level_counts_ = level_counts;
  extracted_alphabet_ = has_alphabet;
  if (!workspace_) workspace_ = std::make_unique<detail::QueryWorkspace>();
}

WTMAP_WT
Result<WTMAP_WT_CLASS> WTMAP_WT_CLASS::build(const Symbol* text, std::uint64_t n, const WaveletTreeOptions& options) {
  if (options.backend == Backend::gpu && !gpu_available()) return Status{StatusCode::unavailable, "no usable CUDA device"};
  if (options.sigma > (std::uint64_t{1} << (8 * sizeof(Symbol)))) {
    return invalid_argument("sigma = " + std::to_string(options.sigma) + " exceeds the range of " +
                            std::to_string(8 * sizeof(Symbol)) + "-bit symbols");
  }
  if (options.backend == Backend::gpu) {
    GpuTreeBuilder<Symbol> builder;
    return build_with(builder, text, n, options.sigma);
  }
  CpuTreeBuilder<Symbol> builder;
  return build_with(builder, text, n, options.sigma);
}

// Thesis Alg. 4 in stages, each the same on either backend: the builder carries out those whose
// algorithms differ (alphabet, histogram, sort), the shared steps run through for_each_index.
WTMAP_WT
template <class Builder>
Result<WTMAP_WT_CLASS> WTMAP_WT_CLASS::build_with(Builder& builder, const Symbol* text, std::uint64_t n,
                                                  std::uint64_t sigma) {
  using Packing = LevelPacking<Arity>;
  constexpr Backend backend = Builder::kBackend;
  const bool extract = sigma == 0;

  // 1. The text on the backend, mapped to the minimal alphabet.
  std::vector<Symbol> alphabet;
  WTMAP_TRY(map_text(builder, text, n, extract, sigma, alphabet));
  if (sigma > kMaxSigma) {
    return invalid_argument("alphabet of " + std::to_string(sigma) + " symbols exceeds the supported " +
                            std::to_string(kMaxSigma));
  }
  const unsigned num_levels = levels_for_sigma<Arity>(sigma);
  const unsigned code_bits = num_levels * Packing::kDigitBits;

  // 2. Histogram, and reduced codes for binary trees (4-ary levels read the minimal symbol's
  // own digits).
  std::vector<std::uint64_t> hist(sigma, 0);
  WTMAP_TRY(builder.histogram(sigma, num_levels, Arity == 2, hist));
  std::vector<std::uint64_t> cumulative(sigma + 1, 0);
  for (std::uint64_t m = 0; m < sigma; ++m) cumulative[m + 1] = cumulative[m] + hist[m];

  // 3. One allocation for everything; the small tables go in first.
  const Layout layout(Arity == 2 ? level_sizes_from_histogram(hist, sigma, num_levels)
                                 : std::vector<std::uint64_t>(num_levels, n),
                      sigma, extract);
  WaveletTree tree;
  auto storage = Buffer::allocate(backend, layout.total, "wavelet tree");
  if (!storage.ok()) return storage.status();
  tree.storage_ = std::move(storage.value());
  WTMAP_TRY(tree.storage_.copy_from_host(layout.cumulative_offset, cumulative.data(), cumulative.size() * 8));
  if (extract) WTMAP_TRY(tree.storage_.copy_from_host(layout.alphabet_offset, alphabet.data(), sigma * sizeof(Symbol)));

  // 4. Levels: stable sort by the leading code digits, pack the next digit, build its support.
  std::vector<std::uint64_t> level_counts(num_levels * Layout::kCountsPerLevel, 0);
  WTMAP_TRY(build_levels<Arity>(builder, layout, tree.storage_.data(), code_bits, level_counts));
  builder = Builder{};  // the text's memory, before the tables

  // 5. Per-node tables (thesis 5.2.1: precomputed ranks at node starts).
  tree.bind_view(layout, n, sigma, extract, level_counts);
  auto* tables = reinterpret_cast<std::uint64_t*>(tree.storage_.data() + layout.node_offset);
  WTMAP_TRY(detail::for_each_index(backend, layout.num_nodes, NodeTables<View>{tree.view_, tables, layout.num_nodes}));
  return std::move(tree);
}

WTMAP_WT
std::vector<Symbol> WTMAP_WT_CLASS::alphabet() const {
  std::vector<Symbol> a(view_.sigma);
  if (!extracted_alphabet_) {
    for (std::uint64_t m = 0; m < view_.sigma; ++m) a[m] = static_cast<Symbol>(m);
    return a;
  }
  const auto offset = reinterpret_cast<const std::byte*>(view_.alphabet) - storage_.data();
  if (!storage_.copy_to_host(static_cast<std::size_t>(offset), a.data(), a.size() * sizeof(Symbol)).ok()) a.clear();
  return a;
}

WTMAP_WT
Status WTMAP_WT_CLASS::access(const std::uint64_t* positions, Symbol* out, std::size_t count) const {
  return detail::run_batch(backend(), AccessOp<Symbol, View>{view_}, positions, out, count, *workspace_, "access");
}
WTMAP_WT
Status WTMAP_WT_CLASS::rank(const RankQuery<Symbol>* queries, std::uint64_t* out, std::size_t count) const {
  return detail::run_batch(backend(), RankOp<Symbol, View>{view_}, queries, out, count, *workspace_, "rank");
}
WTMAP_WT
Status WTMAP_WT_CLASS::select(const SelectQuery<Symbol>* queries, std::uint64_t* out, std::size_t count) const {
  return detail::run_batch(backend(), SelectOp<Symbol, View>{view_}, queries, out, count, *workspace_, "select");
}

WTMAP_WT
Status WTMAP_WT_CLASS::access_device(const std::uint64_t* positions, Symbol* out, std::size_t count,
                                     cudaStream_t stream) const {
  if (backend() != Backend::gpu) return invalid_argument("access_device needs a GPU-backed wavelet tree");
  return detail::run_batch_device(AccessOp<Symbol, View>{view_}, positions, out, count, stream, *workspace_, "access");
}
WTMAP_WT
Status WTMAP_WT_CLASS::rank_device(const RankQuery<Symbol>* queries, std::uint64_t* out, std::size_t count,
                                   cudaStream_t stream) const {
  if (backend() != Backend::gpu) return invalid_argument("rank_device needs a GPU-backed wavelet tree");
  return detail::run_batch_device(RankOp<Symbol, View>{view_}, queries, out, count, stream, *workspace_, "rank");
}
WTMAP_WT
Status WTMAP_WT_CLASS::select_device(const SelectQuery<Symbol>* queries, std::uint64_t* out, std::size_t count,
                                     cudaStream_t stream) const {
  if (backend() != Backend::gpu) return invalid_argument("select_device needs a GPU-backed wavelet tree");
  return detail::run_batch_device(SelectOp<Symbol, View>{view_}, queries, out, count, stream, *workspace_, "select");
}

WTMAP_WT
Status WTMAP_WT_CLASS::save(std::ostream& out) const {
  detail::Writer w(out);
  w.bytes(kMagic, sizeof kMagic);
  w.u64(detail::kFormatVersion);
  w.u64(Arity);
  w.u64(sizeof(Symbol));
  w.u64(view_.size);
  w.u64(view_.sigma);
  w.u64(extracted_alphabet_ ? 1 : 0);
  for (unsigned l = 0; l < view_.num_levels; ++l) {
    w.u64(view_.levels[l].size);
    for (unsigned c = 0; c < Layout::kCountsPerLevel; ++c) w.u64(level_counts_[Layout::kCountsPerLevel * l + c]);
  }
  WTMAP_TRY(w.buffer(storage_));
  return w.status("wavelet tree");
}

WTMAP_WT
Result<WTMAP_WT_CLASS> WTMAP_WT_CLASS::load(std::istream& in, Backend backend) {
  if (backend == Backend::gpu && !gpu_available()) return Status{StatusCode::unavailable, "no usable CUDA device"};
  detail::Reader r(in, "wavelet tree");
  WTMAP_TRY(r.magic(kMagic));
  WTMAP_TRY(r.version());
  std::uint64_t arity = 0, width = 0, n = 0, sigma = 0, extracted = 0;
  WTMAP_TRY(r.u64(arity));
  if (arity != Arity) {
    return corrupt_data("wavelet tree: stored with arity " + std::to_string(arity) + ", loaded as arity " + std::to_string(Arity));
  }
  WTMAP_TRY(r.u64(width));
  if (width != sizeof(Symbol)) {
    return corrupt_data("wavelet tree: stored with " + std::to_string(width) + "-byte symbols, loaded as " +
                        std::to_string(sizeof(Symbol)) + "-byte symbols");
  }
  WTMAP_TRY(r.u64(n));
  WTMAP_TRY(r.u64(sigma));
  WTMAP_TRY(r.u64(extracted));
  if (sigma > kMaxSigma || extracted > 1 || (extracted == 0 && sigma > (std::uint64_t{1} << (8 * sizeof(Symbol))))) {
    return corrupt_data("wavelet tree: header holds an impossible alphabet (sigma = " + std::to_string(sigma) + ")");
  }
  const unsigned num_levels = levels_for_sigma<Arity>(sigma);
  std::vector<std::uint64_t> sizes(num_levels), counts(num_levels * Layout::kCountsPerLevel);
  for (unsigned l = 0; l < num_levels; ++l) {
    WTMAP_TRY(r.u64(sizes[l]));
    std::uint64_t sum = 0;
    for (unsigned c = 0; c < Layout::kCountsPerLevel; ++c) {
      WTMAP_TRY(r.u64(counts[Layout::kCountsPerLevel * l + c]));
      sum += counts[Layout::kCountsPerLevel * l + c];
    }
    if (sizes[l] > n || sum > sizes[l] || (Arity == 4 && sum != sizes[l])) {
      return corrupt_data("wavelet tree: level " + std::to_string(l) + " header is inconsistent");
    }
  }
  const Layout layout(sizes, sigma, extracted == 1);
  WaveletTree tree;
  auto storage = r.buffer(backend, layout.total);
  if (!storage.ok()) return storage.status();
  tree.storage_ = std::move(storage.value());
  // The level sizes are a function of the histogram: check the stored one against the header.
  std::vector<std::uint64_t> cumulative(sigma + 1);
  WTMAP_TRY(tree.storage_.copy_to_host(layout.cumulative_offset, cumulative.data(), cumulative.size() * 8));
  std::vector<std::uint64_t> hist(sigma);
  for (std::uint64_t m = 0; m < sigma; ++m) {
    if (cumulative[m + 1] < cumulative[m]) return corrupt_data("wavelet tree: cumulative histogram is not monotone");
    hist[m] = cumulative[m + 1] - cumulative[m];
  }
  const std::vector<std::uint64_t> expected =
      Arity == 2 ? level_sizes_from_histogram(hist, sigma, num_levels) : std::vector<std::uint64_t>(num_levels, n);
  if (cumulative[0] != 0 || cumulative[sigma] != n || expected != sizes) {
    return corrupt_data("wavelet tree: histogram does not match the level sizes");
  }
  WTMAP_TRY(check_support(tree.storage_, layout, n, sigma, extracted == 1, counts));
  tree.bind_view(layout, n, sigma, extracted == 1, counts);
  return std::move(tree);
}

// The tree rebuilt from the loaded level bits in host memory (support_check.hpp): the level
// counts, rank directories, select samples and node tables must be the ones the bits give, the
// alphabet strictly increasing, and the histogram the symbols' ranks at n (rank is what LF and
// backward search use; a histogram that disagrees would send them past the rows).
WTMAP_WT
Status WTMAP_WT_CLASS::check_support(const Buffer& storage, const Layout& layout, std::uint64_t n, std::uint64_t sigma,
                                     bool has_alphabet, const std::vector<std::uint64_t>& counts) {
  Buffer copy;
  auto loaded = detail::host_bytes(storage, copy);
  if (!loaded.ok()) return loaded.status();
  WaveletTree rebuilt;
  auto expected = Buffer::allocate(Backend::cpu, layout.total, "the check of a loaded wavelet tree");
  if (!expected.ok()) return expected.status();
  rebuilt.storage_ = std::move(expected.value());
  std::byte* base = rebuilt.storage_.data();
  std::vector<std::uint64_t> rebuilt_counts(counts.size());
  for (std::size_t l = 0; l < layout.level_size.size(); ++l) {
    const std::uint64_t offset = layout.level_offset[l], size = layout.level_size[l];
    if constexpr (Arity == 2) {
      detail::copy_rank_select_bits(*loaded + offset, base + offset, size);
      RankSelectView level;
      WTMAP_TRY(detail::build_rank_select(Backend::cpu, base + offset, size, level));
      rebuilt_counts[l] = level.ones;
    } else {
      detail::copy_quad_symbols(*loaded + offset, base + offset, size);
      QuadVectorView level;
      WTMAP_TRY(detail::build_quad_vector(Backend::cpu, base + offset, size, level));
      for (unsigned c = 0; c < 4; ++c) rebuilt_counts[4 * l + c] = level.totals[c];
    }
  }
  if (rebuilt_counts != counts) return corrupt_data("wavelet tree: the header's level counts disagree with the bits");
  std::memcpy(base + layout.cumulative_offset, *loaded + layout.cumulative_offset, (sigma + 1) * 8);
  if (has_alphabet) {
    const auto* alphabet = reinterpret_cast<const Symbol*>(*loaded + layout.alphabet_offset);
    for (std::uint64_t m = 1; m < sigma; ++m) {
      if (alphabet[m] <= alphabet[m - 1]) return corrupt_data("wavelet tree: the alphabet is not strictly increasing");
    }
    std::memcpy(base + layout.alphabet_offset, alphabet, sigma * sizeof(Symbol));
  }
  rebuilt.bind_view(layout, n, sigma, has_alphabet, counts);
  auto* tables = reinterpret_cast<std::uint64_t*>(base + layout.node_offset);
  WTMAP_TRY(detail::for_each_index(Backend::cpu, layout.num_nodes, NodeTables<View>{rebuilt.view_, tables, layout.num_nodes}));
  WTMAP_TRY(detail::same_support(*loaded, base, layout.total, "wavelet tree: a rank directory or node table"));
  for (std::uint64_t m = 0; m < sigma; ++m) {
    if (rebuilt.view_.rank(rebuilt.view_.from_minimal(m), n) != rebuilt.view_.occurrences_minimal(m)) {
      return corrupt_data("wavelet tree: the histogram disagrees with the bits (symbol " + std::to_string(m) + ")");
    }
  }
  return {};
}

template class WaveletTree<std::uint8_t, 2>;
template class WaveletTree<std::uint16_t, 2>;
template class WaveletTree<std::uint32_t, 2>;
template class WaveletTree<std::uint8_t, 4>;
template class WaveletTree<std::uint16_t, 4>;
template class WaveletTree<std::uint32_t, 4>;

#undef WTMAP_WT
#undef WTMAP_WT_CLASS

}  // namespace wtmap
