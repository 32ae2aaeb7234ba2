#include "wtmap/aligner/batch_aligner.hpp"

#include <chrono>
#include <cmath>

#include "wtmap/core/detail/batch.cuh"

namespace wtmap::aligner {
namespace {

// A stepwise batch operation (detail/batch.cuh): the GPU keeps every thread on a read.
struct SearchOp {
  using In = fmindex::PatternRef;
  using Out = SearchResult;
  using State = ReadSearch<kHitSlots>;
  fmindex::FmIndexView v;
  const std::uint8_t* codes;  // on the backend
  std::uint64_t codes_size;
  SearchParams params;
  WTMAP_HD bool valid(const In& p) const { return p.offset + p.length <= codes_size; }
  WTMAP_HD void start(State& s, const In& p, Out& r) const { s.start(v, codes + p.offset, p.length, params, r); }
  WTMAP_HD bool step(State& s, Out& r) const { return s.step(v, r); }
  std::string why_invalid(const In& p) const {
    return "read at offset " + std::to_string(p.offset) + " runs past the " + std::to_string(codes_size) + " bases";
  }
};

}  // namespace

std::uint64_t read_hash(const SeqRecord& read) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](unsigned char c) {
    h ^= c;
    h *= 1099511628211ull;
  };
  for (char c : read.name) mix(static_cast<unsigned char>(c));
  mix(0);
  for (char c : read.sequence) mix(static_cast<unsigned char>(c));
  return h;
}

int mapping_quality(const ReadAlignment& a, unsigned max_mismatches) {
  if (!a.mapped) return 0;
  if (a.best_count > 1 || (a.flags & (kWorkCapped | kStackOverflow)) != 0) return 0;
  if (a.mismatches == max_mismatches) return 25;
  if (a.second_count == 0) return 37;
  const std::uint64_t n = a.second_count >= 255 ? 255 : a.second_count;
  const int log_n = static_cast<int>(4.343 * std::log(static_cast<double>(n)) + 0.5);
  return log_n > 23 ? 0 : 23 - log_n;
}

BatchAligner::BatchAligner(const fmindex::FmIndex& index, const AlignOptions& options)
    : index_(index), options_(options), workspace_(std::make_unique<wtmap::detail::QueryWorkspace>()) {}

BatchAligner::~BatchAligner() = default;

Status BatchAligner::align(const std::vector<SeqRecord>& reads, std::vector<ReadAlignment>& out) {
  if (options_.max_alternatives > kMaxAlternatives) {
    return invalid_argument("at most " + std::to_string(kMaxAlternatives) + " alternative hits can be listed");
  }
  using Clock = std::chrono::steady_clock;
  auto lap = [last = Clock::now()](double& stage) mutable {
    const auto now = Clock::now();
    stage += std::chrono::duration<double>(now - last).count();
    last = now;
  };
  const std::size_t n = reads.size();
  codes_.clear();
  patterns_.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const std::string& s = reads[r].sequence;
    patterns_[r] = {codes_.size(), static_cast<std::uint32_t>(s.size())};
    for (char c : s) {
      const int code = fmindex::nucleotide_code(c);
      codes_.push_back(static_cast<std::uint8_t>(code < 0 ? 4 : code));
    }
  }
  results_.resize(n);
  lap(seconds_.encode);
  const std::uint8_t* backend_codes = codes_.data();
  Buffer device_codes;
  if (index_.backend() == Backend::gpu) {
    auto b = Buffer::allocate(Backend::gpu, codes_.size(), "read batch");
    if (!b.ok()) return b.status();
    device_codes = std::move(b.value());
    WTMAP_TRY(device_codes.copy_from_host(0, codes_.data(), codes_.size()));
    backend_codes = reinterpret_cast<const std::uint8_t*>(device_codes.data());
  }
  const SearchOp op{index_.view(), backend_codes, codes_.size(), options_.search};
  WTMAP_TRY(wtmap::detail::run_batch(index_.backend(), op, patterns_.data(), results_.data(), n, *workspace_, "search"));
  lap(seconds_.search);

  // Which rows to locate: the reported one (chosen by the read's hash among the best rows), and
  // the alternatives when the hits are few enough to list.
  struct Wanted {
    std::size_t read;
    const HitInterval* slot;
    std::uint64_t row;
    bool primary;
  };
  std::vector<Wanted> wanted;
  out.assign(n, ReadAlignment{});
  for (std::size_t r = 0; r < n; ++r) {
    const SearchResult& res = results_[r];
    ReadAlignment& a = out[r];
    a.flags = res.flags;
    if (!res.mapped()) continue;
    a.mapped = true;
    a.mismatches = res.best;
    a.best_count = res.best_count();
    a.second_count = res.second_count();
    std::uint64_t kept_best = 0;
    for (unsigned s = 0; s < res.num_slots; ++s) {
      if (res.slots[s].edits.count == res.best) kept_best += res.slots[s].hi - res.slots[s].lo;
    }
    std::uint64_t pick = read_hash(reads[r]) % kept_best;
    const HitInterval* primary_slot = nullptr;
    std::uint64_t primary_row = 0;
    for (unsigned s = 0; s < res.num_slots && primary_slot == nullptr; ++s) {
      const HitInterval& h = res.slots[s];
      if (h.edits.count != res.best) continue;
      if (pick < h.hi - h.lo) {
        primary_slot = &h;
        primary_row = h.lo + pick;
      } else {
        pick -= h.hi - h.lo;
      }
    }
    wanted.push_back({r, primary_slot, primary_row, true});
    if (a.best_count + a.second_count <= options_.max_alternatives) {
      for (unsigned s = 0; s < res.num_slots; ++s) {
        const HitInterval& h = res.slots[s];
        for (std::uint64_t row = h.lo; row < h.hi; ++row) {
          if (&h != primary_slot || row != primary_row) wanted.push_back({r, &h, row, false});
        }
      }
    }
  }
  std::vector<std::uint64_t> rows(wanted.size()), positions(wanted.size());
  for (std::size_t w = 0; w < wanted.size(); ++w) rows[w] = wanted[w].row;
  lap(seconds_.choose);
  WTMAP_TRY(index_.locate(rows.data(), positions.data(), rows.size()));
  for (std::size_t w = 0; w < wanted.size(); ++w) {
    const Wanted& x = wanted[w];
    const fmindex::ReferenceHit hit = index_.to_reference(positions[w], reads[x.read].sequence.size());
    const Placement p{hit.contig, hit.position, hit.reverse, x.slot->edits};
    if (x.primary) out[x.read].primary = p; else out[x.read].alternatives.push_back(p);
  }
  lap(seconds_.locate);
  return {};
}

}  // namespace wtmap::aligner
