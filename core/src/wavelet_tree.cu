#include "wtmap/core/wavelet_tree.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstring>
#include <future>
#include <istream>
#include <mutex>
#include <ostream>
#include <string>
#include <system_error>
#include <type_traits>

#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/core/device_handles.hpp"
#include "wtmap/core/device_memory.hpp"
#include "wtmap/core/gpu_selection.hpp"
#include "wtmap/core/pinned_buffer.hpp"
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

// cumulative[m] = occurrences of the symbols below m; cumulative[sigma] = n.
std::vector<std::uint64_t> cumulative_of(const std::vector<std::uint64_t>& hist) {
  std::vector<std::uint64_t> cumulative(hist.size() + 1, 0);
  for (std::uint64_t m = 0; m < hist.size(); ++m) cumulative[m + 1] = cumulative[m] + hist[m];
  return cumulative;
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
  using Word = std::conditional_t<Arity == 2, std::uint32_t, std::uint64_t>;
  static WTMAP_HD Word* word_at(std::byte* level, std::uint64_t w) {
    if constexpr (Arity == 2) {
      return reinterpret_cast<std::uint32_t*>(level) + w;
    } else {
      return &reinterpret_cast<QuadBlock*>(level)[w / QuadVectorLayout::kWordsPerBlock].words[w % QuadVectorLayout::kWordsPerBlock];
    }
  }
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
  // A chunk of a text, loaded when load_staged() is called (GpuTreeBuilder copies it meanwhile).
  Status stage(const Symbol* text, std::uint64_t n) {
    staged_ = text;
    staged_n_ = n;
    return {};
  }
  Status load_staged() { return load(staged_, staged_n_); }
  Symbol* codes() { return codes_.data(); }

  Status distinct_symbols(std::vector<Symbol>& alphabet, const Symbol*& on_backend) {
    alphabet = codes_;
    std::sort(alphabet.begin(), alphabet.end());
    alphabet.erase(std::unique(alphabet.begin(), alphabet.end()), alphabet.end());
    on_backend = alphabet.data();
    return {};
  }

  // `first`: the text position of codes()[0] (a chunk's), for the message.
  Status check_below(std::uint64_t sigma, std::uint64_t first) const {
    const auto it = std::find_if(codes_.begin(), codes_.end(), [&](Symbol c) { return c >= sigma; });
    if (it == codes_.end()) return {};
    return invalid_argument("text position " + std::to_string(first + (it - codes_.begin())) + " holds symbol " +
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
  const Symbol* staged_ = nullptr;
  std::uint64_t staged_n_ = 0;
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

  // The buffers are kept for the next load of at most as many symbols (the chunks of a text).
  Status load(const Symbol* text, std::uint64_t n) {
    n_ = n;
    WTMAP_TRY(codes_.grow_to(Backend::gpu, n * sizeof(Symbol), "wavelet tree construction (text)"));
    WTMAP_TRY(alt_.grow_to(Backend::gpu, n * sizeof(Symbol), "wavelet tree construction (sort buffer)"));
    keys_ = cub::DoubleBuffer<Symbol>(reinterpret_cast<Symbol*>(codes_.data()), reinterpret_cast<Symbol*>(alt_.data()));
    return codes_.copy_from_host(0, text, n * sizeof(Symbol));
  }

  // The chunks of a text, each copied while the device works on the one before: stage() starts
  // the copy of a chunk on a thread of its own -- the host threads' memcpy into a page-locked
  // buffer, then an asynchronous copy to a device buffer of its own on a non-blocking stream,
  // which the legacy default stream of the builder's kernels does not wait for -- and
  // load_staged() waits for it and makes that chunk codes(). A pageable cudaMemcpy would copy at
  // one host memcpy's pace with the device idle.
  Status stage(const Symbol* text, std::uint64_t n) {
    const std::size_t bytes = n * sizeof(Symbol);
    WTMAP_TRY(next_.grow_to(Backend::gpu, bytes, "wavelet tree construction (next chunk)"));
    if (pinned_.size() < bytes) {
      pinned_ = PinnedBuffer{};
      Result<PinnedBuffer> pinned = PinnedBuffer::allocate(bytes, "wavelet tree construction (chunk staging)");
      if (!pinned.ok()) return pinned.status();
      pinned_ = std::move(pinned.value());
    }
    if (!copy_stream_) {
      Result<Stream> stream = Stream::create();
      if (!stream.ok()) return stream.status();
      copy_stream_ = std::move(stream.value());
    }
    int device = 0;
    WTMAP_CUDA_TRY(cudaGetDevice(&device));
    staged_n_ = n;
    auto copy = [this, text, bytes, device]() -> Status {
      WTMAP_TRY(use_gpu(device));  // CUDA's current device is per host thread
      detail::parallel_copy(pinned_.data(), text, bytes);
      WTMAP_CUDA_TRY(cudaMemcpyAsync(next_.data(), pinned_.data(), bytes, cudaMemcpyHostToDevice, copy_stream_.get()));
      WTMAP_CUDA_TRY(cudaStreamSynchronize(copy_stream_.get()));
      return {};
    };
    try {
      staging_ = std::async(std::launch::async, copy);
    } catch (const std::system_error&) {  // no thread to spare: copied now
      std::promise<Status> done;
      done.set_value(copy());
      staging_ = done.get_future();
    }
    return {};
  }
  Status load_staged() {
    WTMAP_TRY(staging_.get());
    n_ = staged_n_;
    WTMAP_TRY(alt_.grow_to(Backend::gpu, n_ * sizeof(Symbol), "wavelet tree construction (sort buffer)"));
    std::swap(codes_, next_);
    keys_ = cub::DoubleBuffer<Symbol>(reinterpret_cast<Symbol*>(codes_.data()), reinterpret_cast<Symbol*>(alt_.data()));
    return {};
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
    WTMAP_TRY(distinct_.grow_to(Backend::gpu, n_ * sizeof(Symbol) + sizeof(std::uint64_t), "alphabet extraction"));
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

  Status check_below(std::uint64_t sigma, std::uint64_t /*first*/) {
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
    std::size_t bytes = 0;
    WTMAP_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys_, n_, static_cast<int>(begin_bit), static_cast<int>(code_bits)));
    WTMAP_TRY(sort_temp_.grow_to(Backend::gpu, bytes, "CUB temporary storage"));
    WTMAP_CUDA_TRY(cub::DeviceRadixSort::SortKeys(sort_temp_.data(), bytes, keys_, n_, static_cast<int>(begin_bit),
                                                  static_cast<int>(code_bits)));
    return {};
  }

 private:
  std::uint64_t n_ = 0, staged_n_ = 0;
  Buffer codes_, alt_, distinct_, sort_temp_, next_;
  cub::DoubleBuffer<Symbol> keys_;
  PinnedBuffer pinned_;
  Stream copy_stream_;
  // Last, so that it is destroyed first: its destructor waits for a copy still under way into
  // the buffers above (a build that failed between stage() and load_staged()).
  std::future<Status> staging_;
};

// ---- The stages, the same on either backend ------------------------------------------------

// Stage 1: the text on the builder's backend, mapped to the minimal alphabet; sigma and, when
// extracted, the alphabet.
template <class Builder, class Symbol>
Status map_text(Builder& builder, const Symbol* text, std::uint64_t n, bool extract, std::uint64_t& sigma,
                std::vector<Symbol>& alphabet) {
  WTMAP_TRY(builder.load(text, n));
  if (!extract) return builder.check_below(sigma, 0);
  const Symbol* on_backend = nullptr;
  WTMAP_TRY(builder.distinct_symbols(alphabet, on_backend));
  sigma = alphabet.size();
  WaveletTreeView<Symbol> mapping{};
  mapping.sigma = sigma;
  mapping.alphabet = on_backend;
  return detail::for_each_index(Builder::kBackend, n, MapToMinimal<Symbol>{mapping, builder.codes()});
}

// A level's rank/select support over its packed digits; its ones (binary) or four totals into counts.
template <unsigned Arity>
Status build_level_support(Backend backend, std::byte* level_base, std::uint64_t count, std::uint64_t* counts) {
  if constexpr (Arity == 2) {
    RankSelectView level;
    WTMAP_TRY(detail::build_rank_select(backend, level_base, count, level));
    counts[0] = level.ones;
  } else {
    QuadVectorView level;
    WTMAP_TRY(detail::build_quad_vector(backend, level_base, count, level));
    for (unsigned c = 0; c < 4; ++c) counts[c] = level.totals[c];
  }
  return {};
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
    WTMAP_TRY(build_level_support<Arity>(Builder::kBackend, level_base, count, &level_counts[l * Layout::kCountsPerLevel]));
  }
  return {};
}

// ---- Construction from chunks of the text (WaveletTreeOptions::chunk) -----------------------
//
// Level l holds its members -- the symbols whose code has more than l digits: all of them in a
// 4-ary tree, a prefix of the minimal alphabet in a binary one (bits::split_size keeps the shallow
// leaves rightmost) -- in the order of a stable sort by their first l digits: runs by prefix, the
// runs in symbol order, each run in text order. A chunk of the text sorted the same way holds its
// own members first, in the same runs, so its member j of prefix p goes to level position
//   cumulative[p's first symbol] + (p's members in earlier chunks) + j - (the chunk's cumulative there),
// j plus one shift per prefix. The host computes the shifts from each chunk's histogram
// (ChunkPlacement), the backend scatters the chunk's digits (ScatterLevel). The levels are then
// whole in the tree's storage and get their rank/select support as in a build from the whole
// text, and the bytes are the same. The histogram comes first (histogram_on_host for 8- and
// 16-bit symbols; for 32-bit ones a pass of the chunks through the backend, after one for an
// extracted alphabet), then the one pass for the levels. Space on the backend: the tree, two
// chunks of codes and 8 bytes per prefix of every level (fewer than 2^code_bits in all).

WTMAP_HD void atomic_or(std::uint32_t* word, std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  atomicOr(reinterpret_cast<unsigned int*>(word), bits);
#else
  __atomic_fetch_or(word, bits, __ATOMIC_RELAXED);
#endif
}
WTMAP_HD void atomic_or(std::uint64_t* word, std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
  atomicOr(reinterpret_cast<unsigned long long*>(word), static_cast<unsigned long long>(bits));
#else
  __atomic_fetch_or(word, bits, __ATOMIC_RELAXED);
#endif
}

// The digits of a chunk's members 32t .. 32t + 31 of one level, set at their level positions. The
// codes are sorted by their first l digits; members next to each other in a run go to positions
// next to each other, so a thread ORs each level word it touches once (two threads may share a
// word where runs or their 32 members meet, hence the atomic OR; the storage starts zeroed).
template <unsigned Arity, class Symbol>
struct ScatterLevel {
  using Packing = LevelPacking<Arity>;
  using Word = typename Packing::Word;
  const Symbol* codes;
  std::uint64_t members;
  const std::int64_t* shifts;  // per prefix of the level (ChunkPlacement)
  unsigned prefix_shift;       // code >> prefix_shift: the first l digits (0 at level 0)
  unsigned digit_shift;        // this level's digit
  std::byte* level;
  WTMAP_HD void operator()(std::uint64_t t) const {
    constexpr unsigned kPerWord = Packing::kSymbolsPerWord;
    const std::uint64_t first = t * kPerWord;
    const std::uint64_t last = members - first > kPerWord ? first + kPerWord : members;
    std::uint64_t word = ~std::uint64_t{0};
    Word bits = 0;
    for (std::uint64_t j = first; j < last; ++j) {
      const std::uint64_t code = codes[j];
      const std::uint64_t pos = j + static_cast<std::uint64_t>(shifts[code >> prefix_shift]);  // shifts may be negative
      if (pos / kPerWord != word) {
        if (bits != 0) atomic_or(Packing::word_at(level, word), bits);
        word = pos / kPerWord;
        bits = 0;
      }
      const auto digit = static_cast<Word>((code >> digit_shift) & ((1u << Packing::kDigitBits) - 1));
      bits |= digit << (Packing::kDigitBits * (pos % kPerWord));
    }
    if (bits != 0) atomic_or(Packing::word_at(level, word), bits);
  }
};

// The shifts of ScatterLevel for each chunk in text order. Time: O(sigma * levels) a chunk.
// Space: 8 bytes twice per prefix of every level.
class ChunkPlacement {
 public:
  // `reduced`: binary codes (encode_symbol); else a symbol's digits are its own bits.
  ChunkPlacement(std::vector<std::uint64_t> cumulative, unsigned num_levels, unsigned digit_bits, bool reduced)
      : cumulative_(std::move(cumulative)), digit_bits_(digit_bits), code_bits_(num_levels * digit_bits) {
    const std::uint64_t sigma = cumulative_.size() - 1;
    codes_.resize(sigma);
    member_end_.assign(num_levels, 0);
    for (std::uint64_t m = 0; m < sigma; ++m) {
      const SymbolCode c = reduced ? encode_symbol(m, sigma, num_levels) : SymbolCode{m, num_levels};
      codes_[m] = c.code;
      for (unsigned l = 0; l < c.length; ++l) member_end_[l] = m + 1;
    }
    offset_.assign(num_levels + 1, 0);
    for (unsigned l = 0; l < num_levels; ++l) offset_[l + 1] = offset_[l] + (std::uint64_t{1} << (l * digit_bits));
    placed_.assign(offset_.back(), 0);
    shifts_.assign(offset_.back(), 0);
    members_.assign(num_levels, 0);
    chunk_cumulative_.assign(sigma + 1, 0);
  }

  // The next chunk, whose histogram is `hist`: its shifts and its members per level.
  void place(const std::vector<std::uint64_t>& hist) {
    for (std::uint64_t m = 0; m < hist.size(); ++m) chunk_cumulative_[m + 1] = chunk_cumulative_[m] + hist[m];
    for (unsigned l = 0; l < members_.size(); ++l) {
      members_[l] = chunk_cumulative_[member_end_[l]];
      std::uint64_t current = ~std::uint64_t{0};
      for (std::uint64_t m = 0; m < member_end_[l]; ++m) {
        const std::uint64_t at = offset_[l] + (codes_[m] >> prefix_shift(l));
        if (at != current) {  // p's first symbol
          current = at;
          shifts_[at] = static_cast<std::int64_t>(cumulative_[m] + placed_[at]) - static_cast<std::int64_t>(chunk_cumulative_[m]);
        }
        placed_[at] += hist[m];
      }
    }
  }

  const std::vector<std::int64_t>& shifts() const { return shifts_; }
  std::uint64_t table_offset(unsigned l) const { return offset_[l]; }
  std::uint64_t members(unsigned l) const { return members_[l]; }
  unsigned prefix_shift(unsigned l) const { return code_bits_ - l * digit_bits_; }

 private:
  std::vector<std::uint64_t> cumulative_, codes_, member_end_, offset_, placed_, members_, chunk_cumulative_;
  std::vector<std::int64_t> shifts_;
  unsigned digit_bits_, code_bits_;
};

// The first pass of a chunked build over a text of 8- or 16-bit symbols, on the host: a counter
// per possible symbol on each CPU thread, in one read of host memory instead of one or two trips
// of every chunk to the backend. Gives the alphabet (sigma 0: the symbols present, and sigma set)
// and the minimal symbols' histogram; a symbol not below a given sigma is refused, naming its
// first text position as CpuTreeBuilder::check_below does. Space: 2^16 counters a thread.
template <class Symbol>
Status histogram_on_host(const Symbol* text, std::uint64_t n, std::uint64_t& sigma, std::vector<Symbol>& alphabet,
                         std::vector<std::uint64_t>& hist) {
  static_assert(sizeof(Symbol) <= 2, "a counter per possible symbol");
  constexpr std::uint64_t kRange = std::uint64_t{1} << (8 * sizeof(Symbol));
  std::vector<std::uint64_t> counts(kRange, 0);
  std::mutex merge;
  detail::parallel_for_ranges(n, [&](std::uint64_t begin, std::uint64_t end) {
    std::vector<std::uint64_t> mine(kRange, 0);
    for (std::uint64_t i = begin; i < end; ++i) ++mine[text[i]];
    const std::lock_guard<std::mutex> lock(merge);
    for (std::uint64_t s = 0; s < kRange; ++s) counts[s] += mine[s];
  }, std::uint64_t{1} << 20);
  hist.clear();
  if (sigma == 0) {
    for (std::uint64_t s = 0; s < kRange; ++s) {
      if (counts[s] == 0) continue;
      alphabet.push_back(static_cast<Symbol>(s));
      hist.push_back(counts[s]);
    }
    sigma = alphabet.size();
    return {};
  }
  for (std::uint64_t s = sigma; s < kRange; ++s) {
    if (counts[s] == 0) continue;
    const std::uint64_t at = static_cast<std::uint64_t>(std::find_if(text, text + n, [&](Symbol c) { return c >= sigma; }) - text);
    return invalid_argument("text position " + std::to_string(at) + " holds symbol " + std::to_string(static_cast<std::uint64_t>(text[at])) +
                            ", not below sigma = " + std::to_string(sigma));
  }
  hist.assign(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(sigma));
  return {};
}

// f(first, count) for each chunk of the text in order, with the chunk on the builder (codes())
// and the next one staged meanwhile. A chunk still staged when f fails is waited for by the
// builder's destruction.
template <class Builder, class Symbol, class F>
Status for_each_chunk(Builder& builder, const Symbol* text, std::uint64_t n, std::uint64_t chunk, F f) {
  if (n == 0) return {};
  WTMAP_TRY(builder.stage(text, std::min(chunk, n)));
  for (std::uint64_t first = 0; first < n; first += chunk) {
    WTMAP_TRY(builder.load_staged());
    const std::uint64_t next = first + chunk;
    if (next < n) WTMAP_TRY(builder.stage(text + next, std::min(chunk, n - next)));
    WTMAP_TRY(f(first, std::min(chunk, n - first)));
  }
  return {};
}

// Pass 0 of a chunked build that extracts its alphabet: the union of the chunks' distinct symbols.
template <class Builder, class Symbol>
Status distinct_symbols_in_chunks(Builder& builder, const Symbol* text, std::uint64_t n, std::uint64_t chunk,
                                  std::vector<Symbol>& alphabet) {
  std::vector<Symbol> mine, merged;
  const Symbol* on_backend = nullptr;
  return for_each_chunk(builder, text, n, chunk, [&](std::uint64_t, std::uint64_t) -> Status {
    WTMAP_TRY(builder.distinct_symbols(mine, on_backend));
    merged.clear();
    std::set_union(alphabet.begin(), alphabet.end(), mine.begin(), mine.end(), std::back_inserter(merged));
    alphabet.swap(merged);
    return {};
  });
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

std::uint64_t wavelet_tree_gpu_chunk(std::uint64_t n, std::uint64_t sigma, unsigned symbol_bytes, std::uint64_t available) {
  const unsigned code_bits = sigma == 0 ? 8 * symbol_bytes : std::max(1u, bits::ceil_log2(sigma));
  // A level's digits with their rank/select support: at most 1.2 times their bits; and the
  // node tables, the histogram and the alphabet: under 64 MiB for any alphabet build() takes.
  const std::uint64_t tree = n / 8 * code_bits / 5 * 6 + (std::uint64_t{64} << 20);
  const std::uint64_t per_symbol = 4 * std::uint64_t{symbol_bytes};  // codes, sort buffer, alphabet sort, CUB's
  if (tree + per_symbol * n <= available) return 0;
  const std::uint64_t room = available > tree ? available - tree : 0;
  return std::max<std::uint64_t>(room / per_symbol, std::uint64_t{1} << 20);
}

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
  std::uint64_t chunk = options.chunk;
  if (options.backend == Backend::gpu) {
    if (chunk == 0) {
      Result<std::size_t> available = device_memory_available();
      if (!available.ok()) return available.status();
      chunk = wavelet_tree_gpu_chunk(n, options.sigma, sizeof(Symbol), *available);
    }
    GpuTreeBuilder<Symbol> builder;
    return chunk == 0 || chunk >= n ? build_with(builder, text, n, options.sigma) : build_in_chunks(builder, text, n, options.sigma, chunk);
  }
  CpuTreeBuilder<Symbol> builder;
  return chunk == 0 || chunk >= n ? build_with(builder, text, n, options.sigma) : build_in_chunks(builder, text, n, options.sigma, chunk);
}

WTMAP_WT
Status WTMAP_WT_CLASS::check_sigma(std::uint64_t sigma) {
  if (sigma <= kMaxSigma) return {};
  return invalid_argument("alphabet of " + std::to_string(sigma) + " symbols exceeds the supported " + std::to_string(kMaxSigma));
}

// Thesis Alg. 4 in stages, each the same on either backend: the builder carries out those whose
// algorithms differ (alphabet, histogram, sort), the shared steps run through for_each_index.
WTMAP_WT
template <class Builder>
Result<WTMAP_WT_CLASS> WTMAP_WT_CLASS::build_with(Builder& builder, const Symbol* text, std::uint64_t n,
                                                  std::uint64_t sigma) {
  using Packing = LevelPacking<Arity>;
  const bool extract = sigma == 0;

  // 1. The text on the backend, mapped to the minimal alphabet.
  std::vector<Symbol> alphabet;
  WTMAP_TRY(map_text(builder, text, n, extract, sigma, alphabet));
  WTMAP_TRY(check_sigma(sigma));
  const unsigned num_levels = levels_for_sigma<Arity>(sigma);
  const unsigned code_bits = num_levels * Packing::kDigitBits;

  // 2. Histogram, and reduced codes for binary trees (4-ary levels read the minimal symbol's
  // own digits).
  std::vector<std::uint64_t> hist(sigma, 0);
  WTMAP_TRY(builder.histogram(sigma, num_levels, Arity == 2, hist));

  // 3. One allocation for everything; the small tables go in first.
  const Layout layout = layout_of(n, hist, extract);
  WaveletTree tree;
  WTMAP_TRY(tree.make_storage(Builder::kBackend, layout, hist, extract ? &alphabet : nullptr));

  // 4. Levels: stable sort by the leading code digits, pack the next digit, build its support.
  std::vector<std::uint64_t> level_counts(num_levels * Layout::kCountsPerLevel, 0);
  WTMAP_TRY(build_levels<Arity>(builder, layout, tree.storage_.data(), code_bits, level_counts));
  builder = Builder{};  // the text's memory, before the tables

  // 5. The view and the per-node tables.
  WTMAP_TRY(tree.finish(layout, n, sigma, extract, level_counts));
  return std::move(tree);
}

// The same stages over chunks of the text (see ChunkPlacement): the histogram (on the host, or
// from a pass of the chunks), the levels' digits scattered in the one pass after it, then every
// level's support and the node tables.
WTMAP_WT
template <class Builder>
Result<WTMAP_WT_CLASS> WTMAP_WT_CLASS::build_in_chunks(Builder& builder, const Symbol* text, std::uint64_t n,
                                                       std::uint64_t sigma, std::uint64_t chunk) {
  using Packing = LevelPacking<Arity>;
  constexpr Backend backend = Builder::kBackend;
  const bool extract = sigma == 0;
  // The alphabet and the histogram: from one read of host memory where a counter per possible
  // symbol is cheap, else from the chunks on the backend (below).
  constexpr bool kOnHost = sizeof(Symbol) <= 2;
  std::vector<Symbol> alphabet;
  std::vector<std::uint64_t> hist;
  if constexpr (kOnHost) {
    WTMAP_TRY(histogram_on_host(text, n, sigma, alphabet, hist));
  } else if (extract) {
    WTMAP_TRY(distinct_symbols_in_chunks(builder, text, n, chunk, alphabet));
    sigma = alphabet.size();
  }
  WTMAP_TRY(check_sigma(sigma));
  const unsigned num_levels = levels_for_sigma<Arity>(sigma);
  const unsigned code_bits = num_levels * Packing::kDigitBits;
  Result<Buffer> mapping = Buffer::allocate(backend, std::max<std::size_t>(alphabet.size() * sizeof(Symbol), 1), "alphabet");
  if (!mapping.ok()) return mapping.status();
  WTMAP_TRY(mapping->copy_from_host(0, alphabet.data(), alphabet.size() * sizeof(Symbol)));

  // The chunk on the backend: mapped to the minimal alphabet (or checked), encoded, its histogram.
  std::vector<std::uint64_t> chunk_hist(sigma);
  auto prepare = [&](std::uint64_t first, std::uint64_t count) -> Status {
    if (extract) {
      WaveletTreeView<Symbol> to_minimal{};
      to_minimal.sigma = sigma;
      to_minimal.alphabet = reinterpret_cast<const Symbol*>(mapping->data());
      WTMAP_TRY(detail::for_each_index(backend, count, MapToMinimal<Symbol>{to_minimal, builder.codes()}));
    } else if constexpr (!kOnHost) {
      WTMAP_TRY(builder.check_below(sigma, first));
    }
    std::fill(chunk_hist.begin(), chunk_hist.end(), 0);
    return builder.histogram(sigma, num_levels, Arity == 2, chunk_hist);
  };

  if constexpr (!kOnHost) {
    hist.assign(sigma, 0);
    WTMAP_TRY(for_each_chunk(builder, text, n, chunk, [&](std::uint64_t first, std::uint64_t count) -> Status {
      WTMAP_TRY(prepare(first, count));
      for (std::uint64_t m = 0; m < sigma; ++m) hist[m] += chunk_hist[m];
      return {};
    }));
  }
  const Layout layout = layout_of(n, hist, extract);
  WaveletTree tree;
  WTMAP_TRY(tree.make_storage(backend, layout, hist, extract ? &alphabet : nullptr));

  ChunkPlacement placement(cumulative_of(hist), num_levels, Packing::kDigitBits, Arity == 2);
  Result<Buffer> shifts = Buffer::allocate(backend, placement.shifts().size() * sizeof(std::int64_t), "wavelet tree construction (chunk placement)");
  if (!shifts.ok()) return shifts.status();
  const auto* d_shifts = reinterpret_cast<const std::int64_t*>(shifts->data());
  WTMAP_TRY(for_each_chunk(builder, text, n, chunk, [&](std::uint64_t first, std::uint64_t count) -> Status {
    WTMAP_TRY(prepare(first, count));
    placement.place(chunk_hist);
    WTMAP_TRY(shifts->copy_from_host(0, placement.shifts().data(), placement.shifts().size() * sizeof(std::int64_t)));
    for (unsigned l = 0; l < num_levels; ++l) {
      const unsigned digit_shift = code_bits - (l + 1) * Packing::kDigitBits;
      if (l > 0) WTMAP_TRY(builder.sort_from(digit_shift + Packing::kDigitBits, Packing::kDigitBits, code_bits));
      const ScatterLevel<Arity, Symbol> scatter{builder.codes(), placement.members(l), d_shifts + placement.table_offset(l),
                                                placement.prefix_shift(l), digit_shift, tree.storage_.data() + layout.level_offset[l]};
      WTMAP_TRY(detail::for_each_index(backend, bits::ceil_div<std::uint64_t>(placement.members(l), Packing::kSymbolsPerWord), scatter));
    }
    return {};
  }));
  builder = Builder{};

  std::vector<std::uint64_t> level_counts(num_levels * Layout::kCountsPerLevel, 0);
  for (unsigned l = 0; l < num_levels; ++l) {
    WTMAP_TRY(build_level_support<Arity>(backend, tree.storage_.data() + layout.level_offset[l], layout.level_size[l],
                                         &level_counts[l * Layout::kCountsPerLevel]));
  }
  WTMAP_TRY(tree.finish(layout, n, sigma, extract, level_counts));
  return std::move(tree);
}

// The layout of a tree of n symbols whose minimal symbols' histogram is `hist`.
WTMAP_WT
typename WTMAP_WT_CLASS::Layout WTMAP_WT_CLASS::layout_of(std::uint64_t n, const std::vector<std::uint64_t>& hist, bool has_alphabet) {
  const std::uint64_t sigma = hist.size();
  const unsigned num_levels = levels_for_sigma<Arity>(sigma);
  return Layout(Arity == 2 ? level_sizes_from_histogram(hist, sigma, num_levels) : std::vector<std::uint64_t>(num_levels, n), sigma,
                has_alphabet);
}

// The tree's one allocation (zeroed), with the cumulative counts and the extracted alphabet in it.
WTMAP_WT
Status WTMAP_WT_CLASS::make_storage(Backend backend, const Layout& layout, const std::vector<std::uint64_t>& hist,
                                    const std::vector<Symbol>* alphabet) {
  const std::vector<std::uint64_t> cumulative = cumulative_of(hist);
  Result<Buffer> storage = Buffer::allocate(backend, layout.total, "wavelet tree");
  if (!storage.ok()) return storage.status();
  storage_ = std::move(storage.value());
  WTMAP_TRY(storage_.copy_from_host(layout.cumulative_offset, cumulative.data(), cumulative.size() * 8));
  if (alphabet != nullptr) WTMAP_TRY(storage_.copy_from_host(layout.alphabet_offset, alphabet->data(), alphabet->size() * sizeof(Symbol)));
  return {};
}

// The view over the built levels, then the per-node tables (thesis 5.2.1: precomputed ranks at
// node starts).
WTMAP_WT
Status WTMAP_WT_CLASS::finish(const Layout& layout, std::uint64_t n, std::uint64_t sigma, bool has_alphabet,
                              const std::vector<std::uint64_t>& level_counts) {
  bind_view(layout, n, sigma, has_alphabet, level_counts);
  auto* tables = reinterpret_cast<std::uint64_t*>(storage_.data() + layout.node_offset);
  return detail::for_each_index(backend(), layout.num_nodes, NodeTables<View>{view_, tables, layout.num_nodes});
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
