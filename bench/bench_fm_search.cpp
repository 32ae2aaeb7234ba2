// In-memory count throughput of the FM-index: loads an index and pattern files, then times
// FmIndex::search (backward search of every pattern, host memory in and out, copies included)
// with no parsing or output -- the number to hold against bench_fm_count's SDSL loop, which
// also counts patterns already in memory.
//
//   bench_fm_search PREFIX PATTERNS.fa|fq [PATTERNS2 ...] [--device gpu|cpu] [--repeat N] [--kmer K,K2,...]
//                   [--pinned]
//
// Per k-mer table length (--kmer; default: the one the index's size gives, as `wtmap count` has)
// and pattern file: patterns, total count, best-of-N seconds, patterns/s. The table's build time
// is printed for each length. --pinned holds codes, patterns and results in page-locked memory,
// which the GPU copies at full DMA speed (a caller's pageable memory goes through staging buffers).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/fm_index.hpp"

using namespace wtmap;
using Clock = std::chrono::steady_clock;

[[noreturn]] static void die(const std::string& msg) {
  std::fprintf(stderr, "bench_fm_search: %s\n", msg.c_str());
  std::exit(1);
}

// A copy of `v` in page-locked host memory (or `v` itself when not asked for).
template <class T>
class HostArray {
 public:
  HostArray(const std::vector<T>& v, bool pinned) : size_(v.size()) {
    if (pinned) {
      if (cudaMallocHost(reinterpret_cast<void**>(&pinned_), std::max<std::size_t>(1, size_) * sizeof(T)) != cudaSuccess)
        die("--pinned: cudaMallocHost failed (no usable CUDA device?)");
      std::copy(v.begin(), v.end(), pinned_);
    } else {
      pageable_ = v;
    }
  }
  ~HostArray() { if (pinned_ != nullptr) cudaFreeHost(pinned_); }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  T* data() { return pinned_ != nullptr ? pinned_ : pageable_.data(); }
  std::size_t size() const { return size_; }

 private:
  std::size_t size_;
  T* pinned_ = nullptr;
  std::vector<T> pageable_;
};

int main(int argc, char** argv) {
  std::string prefix, device = "gpu";
  std::vector<std::string> files;
  int repeat = 5;
  bool pinned = false;
  std::vector<std::uint32_t> kmer_lengths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device = argv[++i];
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--pinned") pinned = true;
    else if (a == "--kmer" && i + 1 < argc) {
      for (const char* p = argv[++i]; *p != '\0';) {
        char* end = nullptr;
        kmer_lengths.push_back(static_cast<std::uint32_t>(std::strtoul(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
      }
    }
    else if (prefix.empty()) prefix = a;
    else files.push_back(a);
  }
  if (prefix.empty() || files.empty())
    die("usage: bench_fm_search PREFIX PATTERNS... [--device gpu|cpu] [--repeat N] [--kmer K,K2,...] [--pinned]");
  const Backend backend = device == "cpu" ? Backend::cpu : Backend::gpu;
  auto index = fmindex::FmIndex::load(prefix + ".wtmap", backend);
  if (!index.ok()) die(index.status().message());
  if (kmer_lengths.empty()) kmer_lengths.push_back(index->kmer_length());

  struct PatternFile {
    std::string path;
    std::vector<std::uint8_t> codes;
    std::vector<fmindex::PatternRef> patterns;
  };
  std::vector<PatternFile> inputs;
  for (const std::string& path : files) {
    auto reader = aligner::SeqReader::open(path);
    if (!reader.ok()) die(reader.status().message());
    PatternFile f{path, {}, {}};
    aligner::SeqRecord r;
    while (true) {
      auto got = reader->next(r);
      if (!got.ok()) die(got.status().message());
      if (!*got) break;
      f.patterns.push_back({f.codes.size(), static_cast<std::uint32_t>(r.sequence.size())});
      for (char c : r.sequence) f.codes.push_back(fmindex::search_code(c));
    }
    inputs.push_back(std::move(f));
  }

  for (const std::uint32_t k : kmer_lengths) {
    const auto built = Clock::now();
    const Status table = index->set_kmer_length(k);
    if (!table.ok()) die(table.message());
    std::printf("k-mer table k=%u: %zu bytes, built in %.4f s\n", k, k == 0 ? 0 : std::size_t{16} << (2 * k),
                std::chrono::duration<double>(Clock::now() - built).count());
    for (const PatternFile& f : inputs) {
      HostArray<std::uint8_t> codes(f.codes, pinned);
      HostArray<fmindex::PatternRef> patterns(f.patterns, pinned);
      HostArray<fmindex::SaInterval> out(std::vector<fmindex::SaInterval>(f.patterns.size()), pinned);
      double best = 1e300;
      for (int run = 0; run <= repeat; ++run) {  // run 0 warms up (workspace allocation)
        const auto t0 = Clock::now();
        const Status s = index->search(codes.data(), codes.size(), patterns.data(), patterns.size(), out.data());
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!s.ok()) die(s.message());
        if (run > 0) best = std::min(best, seconds);
      }
      std::uint64_t total = 0;
      for (std::size_t i = 0; i < out.size(); ++i) total += out.data()[i].size();
      std::printf("%s: %zu patterns, %llu matches, search %.4f s, %.4g patterns/s (%s, k=%u%s)\n", f.path.c_str(),
                  f.patterns.size(), static_cast<unsigned long long>(total), best,
                  static_cast<double>(f.patterns.size()) / best, device.c_str(), k, pinned ? ", pinned" : "");
    }
  }
  return 0;
}
