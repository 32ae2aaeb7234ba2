// The gapped mapper's per-read steps (see mapper_steps.hpp).
#include "mapper_steps.hpp"

#include <algorithm>
#include <tuple>


namespace wtmap::aligner::gapped {

namespace {

// The longest gap an alignment of `qlen` read bases can hold and still score (bwa's cal_max_gap):
// qlen * match - open over extend, at most twice the band.
std::int64_t max_gap(const Scoring& sc, std::int64_t qlen) {
  const auto del = static_cast<std::int64_t>(double(qlen * sc.match - sc.open_del) / std::max(sc.extend_del, 1) + 1.);
  const auto ins = static_cast<std::int64_t>(double(qlen * sc.match - sc.open_ins) / std::max(sc.extend_ins, 1) + 1.);
  const std::int64_t l = std::max<std::int64_t>(std::max(del, ins), 1);
  return std::min<std::int64_t>(l, 2 * std::int64_t{sc.band});
}

// bwa's test_and_merge: whether `s` belongs to `c` (contained, or near its last seed's diagonal),
// never across a long ambiguity run (an assembly gap stays a separator).
bool joins(Chain& c, const SeedHit& s, const MapperReference& ref, const GappedOptions& o) {
  if (s.contig != c.contig || s.reverse != c.reverse) return false;
  const SeedHit& first = c.seeds.front();
  const SeedHit& last = c.seeds.back();
  const std::int64_t qend = last.qbeg + last.len, rend = last.rbeg + last.len;
  if (s.qbeg >= first.qbeg && s.qbeg + s.len <= qend && s.rbeg >= first.rbeg && s.rbeg + s.len <= rend) return true;
  const std::int64_t x = s.qbeg - last.qbeg, y = s.rbeg - last.rbeg;
  if (y >= 0 && x - y <= o.scoring.band && y - x <= o.scoring.band && x - last.len < kMaxChainGap &&
      y - last.len < kMaxChainGap && !ref.long_run_between(s.contig, s.reverse, last.rbeg + last.len, s.rbeg)) {
    c.seeds.push_back(s);
    return true;
  }
  return false;
}

// bwa's mem_chain_weight: the smaller of the read and reference bases the seeds cover.
std::int32_t chain_weight(const Chain& c) {
  std::int64_t on_read = 0, on_ref = 0, end = 0;
  for (const SeedHit& s : c.seeds) {
    const std::int64_t e = s.qbeg + s.len;
    on_read += std::max<std::int64_t>(0, e - std::max<std::int64_t>(s.qbeg, end));
    end = std::max(end, e);
  }
  end = 0;
  for (const SeedHit& s : c.seeds) {
    const std::int64_t e = s.rbeg + s.len;
    on_ref += std::max<std::int64_t>(0, e - std::max<std::int64_t>(s.rbeg, end));
    end = std::max(end, e);
  }
  return static_cast<std::int32_t>(std::min(on_read, on_ref));
}

// bwa's mem_chain_flt: heaviest first; a chain overlapping a kept heavier one on the read by more
// than mask_level of the shorter is dropped when it weighs less than drop_ratio of it (and 2 k
// bases less); the first chain each kept one shadows stays too.
void filter_chains(std::vector<Chain>& chains, const GappedOptions& o) {
  for (Chain& c : chains) {
    c.weight = chain_weight(c);
    c.qbeg = c.seeds.front().qbeg;
    c.qend = 0;
    for (const SeedHit& s : c.seeds) c.qend = std::max(c.qend, s.qbeg + s.len);
  }
  const auto heavier = [](const Chain& a, const Chain& b) {
    return std::make_tuple(-a.weight, a.contig, a.reverse, a.seeds.front().rbeg, a.qbeg) <
           std::make_tuple(-b.weight, b.contig, b.reverse, b.seeds.front().rbeg, b.qbeg);
  };
  // A read has a few chains mostly: sorted by insertion, stable as stable_sort, which allocates
  // its buffer for any length.
  constexpr std::size_t kInsertionSortMost = 16;
  if (chains.size() > kInsertionSortMost) {
    std::stable_sort(chains.begin(), chains.end(), heavier);
  } else {
    for (std::size_t i = 1; i < chains.size(); ++i) {
      for (std::size_t j = i; j > 0 && heavier(chains[j], chains[j - 1]); --j) std::swap(chains[j], chains[j - 1]);
    }
  }
  thread_local std::vector<std::size_t> kept;  // the calling thread's list, kept between reads
  kept.clear();
  for (std::size_t i = 0; i < chains.size(); ++i) {
    Chain& ci = chains[i];
    bool overlaps = false, dropped = false;
    for (std::size_t j : kept) {
      Chain& cj = chains[j];
      const std::int32_t b = std::max(ci.qbeg, cj.qbeg), e = std::min(ci.qend, cj.qend);
      if (e <= b) continue;
      const std::int32_t shorter = std::min(ci.qend - ci.qbeg, cj.qend - cj.qbeg);
      if (e - b >= shorter * o.mask_level && shorter < kMaxChainGap) {
        overlaps = true;
        if (cj.first_shadowed < 0) cj.first_shadowed = static_cast<std::int32_t>(i);
        if (ci.weight < cj.weight * o.drop_ratio &&
            cj.weight - ci.weight >= 2 * static_cast<std::int32_t>(o.min_seed_length)) {
          dropped = true;
          break;
        }
      }
    }
    if (!dropped) {
      ci.kept = overlaps ? 2 : 3;
      kept.push_back(i);
    }
  }
  for (std::size_t j : kept)
    if (chains[j].first_shadowed >= 0 && chains[chains[j].first_shadowed].kept == 0) chains[chains[j].first_shadowed].kept = 1;
  chains.erase(std::remove_if(chains.begin(), chains.end(), [](const Chain& c) { return c.kept == 0; }), chains.end());
}

// bwa's test in mem_chain2aln: whether seed s lies inside region p near its diagonal, so that
// extending it again would find p again.
bool inside_region(const SeedHit& s, const Region& p, std::int32_t read_length, const Scoring& sc) {
  if (s.contig != p.contig || s.reverse != p.reverse) return false;
  if (s.rbeg < p.rb || s.rbeg + s.len > p.re || s.qbeg < p.qb || s.qbeg + s.len > p.qe) return false;
  if (s.len - p.seed_length > .1 * read_length) return false;  // this seed may give a better alignment
  const auto near = [&](std::int64_t qd, std::int64_t rd) {
    const std::int64_t w = std::min<std::int64_t>(max_gap(sc, std::min(qd, rd)), sc.band);
    return qd - rd < w && rd - qd < w;
  };
  return near(s.qbeg - p.qb, s.rbeg - p.rb) || near(p.qe - (s.qbeg + s.len), p.re - (s.rbeg + s.len));
}

std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ x >> 31;
}

auto region_key(const Region& r) { return std::make_tuple(r.contig, r.reverse, r.rb, r.re, r.qb, r.qe, -r.score); }

}  // namespace

std::vector<Chain> chain_seeds(const std::vector<SeedHit>& hits, const MapperReference& reference,
                               const GappedOptions& options) {
  std::vector<Chain> chains;
  // Room for a few chains and, in each new one, for a chain's usual seeds: one allocation each
  // where push_back's growth made several (chaining was a gapped run's most frequent allocator).
  constexpr std::size_t kUsualChains = 4, kUsualSeeds = 16;
  chains.reserve(std::min(hits.size(), kUsualChains));
  for (std::size_t h = 0; h < hits.size(); ++h) {
    const SeedHit& s = hits[h];
    // bwa's b-tree lookup: the chain of the same contig and strand starting at or before the seed,
    // the one starting last (ties: the newest).
    std::size_t best = chains.size();
    for (std::size_t k = 0; k < chains.size(); ++k) {
      const Chain& c = chains[k];
      if (c.contig != s.contig || c.reverse != s.reverse || c.seeds.front().rbeg > s.rbeg) continue;
      if (best == chains.size() || c.seeds.front().rbeg >= chains[best].seeds.front().rbeg) best = k;
    }
    if (best < chains.size() && joins(chains[best], s, reference, options)) continue;
    Chain c;
    c.contig = s.contig;
    c.reverse = s.reverse;
    c.seeds.reserve(std::min(hits.size() - h, kUsualSeeds));
    c.seeds.push_back(s);
    chains.push_back(std::move(c));
  }
  if (!chains.empty()) filter_chains(chains, options);
  return chains;
}

void chain_window(const Chain& c, std::int32_t read_length, const MapperReference& ref, const Scoring& sc,
                  std::int64_t& lo, std::int64_t& hi) {
  lo = INT64_MAX;
  hi = INT64_MIN;
  std::int64_t keep_lo = INT64_MAX, keep_hi = INT64_MIN;
  for (const SeedHit& s : c.seeds) {
    const std::int64_t after = read_length - s.qbeg - s.len;
    lo = std::min(lo, s.rbeg - (s.qbeg + max_gap(sc, s.qbeg)));
    hi = std::max(hi, s.rbeg + s.len + after + max_gap(sc, after));
    keep_lo = std::min(keep_lo, s.rbeg);
    keep_hi = std::max(keep_hi, s.rbeg + s.len);
  }
  ref.clip_window(c.contig, c.reverse, keep_lo, keep_hi, lo, hi);
}

void ExtensionPlan::start(const std::vector<Chain>& chains) {
  order_.clear();
  next_ = 0;
  std::size_t seeds = 0;
  for (const Chain& c : chains) seeds += c.seeds.size();
  order_.reserve(seeds);
  for (std::size_t k = 0; k < chains.size(); ++k) {
    const std::size_t first = order_.size();
    for (std::size_t j = 0; j < chains[k].seeds.size(); ++j) order_.push_back({k, j});
    // Longest seed first; ties: the later one (bwa's order).
    std::sort(order_.begin() + static_cast<std::ptrdiff_t>(first), order_.end(), [&](const auto& a, const auto& b) {
      const std::int32_t la = chains[k].seeds[a.second].len, lb = chains[k].seeds[b.second].len;
      return la != lb ? la > lb : a.second > b.second;
    });
  }
  extended_.assign(order_.size(), 0);
  taken_.assign(order_.size(), 0);
}

bool ExtensionPlan::next(const std::vector<Chain>& chains, const std::vector<Region>& regions, std::int32_t read_length,
                         const Scoring& sc, std::size_t& chain, std::size_t& seed) {
  while (next_ < order_.size()) {
    const std::size_t at = next_++;
    if (!would_extend(chains, regions, read_length, sc, at, extended_.data())) continue;
    extended_[at] = 1;
    taken_[at] = 1;
    chain = order_[at].first;
    seed = order_[at].second;
    return true;
  }
  return false;
}

void ExtensionPlan::take_ahead(const std::vector<Chain>& chains, const std::vector<Region>& regions,
                               std::int32_t read_length, const Scoring& sc, std::size_t guesses,
                               std::vector<std::pair<std::size_t, std::size_t>>& ahead) {
  ahead.clear();
  for (std::size_t at = next_; at < order_.size(); ++at) {
    if (taken_[at]) continue;
    const bool head = at == 0 || order_[at - 1].first != order_[at].first;
    const bool guess = !head && guesses > 0 && would_extend(chains, regions, read_length, sc, at, nullptr);
    if (!head && !guess) continue;
    guesses -= guess;
    taken_[at] = 1;
    ahead.push_back(order_[at]);
  }
}

// next()'s test: a seed inside a region found so far near its diagonal is skipped unless an
// extended seed of its chain overlaps it off its diagonal.
bool ExtensionPlan::would_extend(const std::vector<Chain>& chains, const std::vector<Region>& regions,
                                 std::int32_t read_length, const Scoring& sc, std::size_t at,
                                 const std::uint8_t* extended) const {
  const SeedHit& s = chains[order_[at].first].seeds[order_[at].second];
  bool known = false;
  for (const Region& p : regions) known = known || inside_region(s, p, read_length, sc);
  return !known || off_diagonal_overlap(chains, at, extended);
}

// bwa's second test in mem_chain2aln: a seed inside a region is extended all the same when a
// seed of its chain already extended, nearly as long, overlaps it on the read by a quarter of
// its length on another diagonal (a tandem repeat: it may lead to a different alignment).
bool ExtensionPlan::off_diagonal_overlap(const std::vector<Chain>& chains, std::size_t at,
                                         const std::uint8_t* extended) const {
  const auto [k, j] = order_[at];
  const SeedHit& s = chains[k].seeds[j];
  for (std::size_t i = at; i-- > 0 && order_[i].first == k;) {
    if (extended != nullptr && !extended[i]) continue;
    const SeedHit& t = chains[k].seeds[order_[i].second];
    if (t.len < s.len * .95) continue;
    if (s.qbeg <= t.qbeg && s.qbeg + s.len - t.qbeg >= s.len >> 2 && t.qbeg - s.qbeg != t.rbeg - s.rbeg) return true;
    if (t.qbeg <= s.qbeg && t.qbeg + t.len - s.qbeg >= s.len >> 2 && s.qbeg - t.qbeg != s.rbeg - t.rbeg) return true;
  }
  return false;
}

Region start_region(const SeedHit& s, std::int32_t chain_index, const ExtendResult* left, const Scoring& sc) {
  Region a;
  a.contig = s.contig;
  a.reverse = s.reverse;
  a.seed_length = s.len;
  a.chain = chain_index;
  if (left == nullptr) {
    a.score = a.true_score = s.len * sc.match;
    a.qb = s.qbeg;
    a.rb = s.rbeg;
    return a;
  }
  const ExtensionEnd end = choose_end(*left, static_cast<std::uint32_t>(s.qbeg), sc.clip5);
  a.score = end.score;
  a.true_score = end.true_score;
  a.qb = s.qbeg - end.query_bases;
  a.rb = s.rbeg - end.target_bases;
  return a;
}

void finish_region(Region& a, const SeedHit& s, const Chain& c, std::int32_t read_length, const ExtendResult* right,
                   const Scoring& sc) {
  a.qe = s.qbeg + s.len;
  a.re = s.rbeg + s.len;
  if (right != nullptr) {
    const ExtensionEnd end = choose_end(*right, static_cast<std::uint32_t>(read_length - a.qe), sc.clip3);
    a.true_score += end.true_score - a.score;
    a.score = end.score;
    a.qe += end.query_bases;
    a.re += end.target_bases;
  }
  // Read bases the chain's seeds inside the region cover (bwa's seedcov, each base once: the
  // LAST-like pass finds seeds inside SMEMs). The list is the calling thread's, kept between calls
  // (a region each: this was a gapped run's most frequent allocation).
  thread_local std::vector<std::pair<std::int32_t, std::int32_t>> covered;
  covered.clear();
  for (const SeedHit& t : c.seeds)
    if (t.qbeg >= a.qb && t.qbeg + t.len <= a.qe && t.rbeg >= a.rb && t.rbeg + t.len <= a.re)
      covered.push_back({t.qbeg, t.qbeg + t.len});
  std::sort(covered.begin(), covered.end());
  std::int32_t end = 0;
  for (const auto& [b, e] : covered) {
    a.seed_coverage += std::max(0, e - std::max(b, end));
    end = std::max(end, e);
  }
}

void finish_regions(std::vector<Region>& regions, std::uint64_t read_hash, const GappedOptions& options) {
  // bwa's mem_sort_dedup_patch without the patching: by end, then of two regions of one contig and
  // strand overlapping by more than kRedundantOverlap on both read and reference, the lower goes.
  std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) {
    return std::make_tuple(a.contig, a.reverse, a.re) < std::make_tuple(b.contig, b.reverse, b.re) ||
           (std::make_tuple(a.contig, a.reverse, a.re) == std::make_tuple(b.contig, b.reverse, b.re) &&
            region_key(a) < region_key(b));
  });
  for (std::size_t i = 1; i < regions.size(); ++i) {
    Region& p = regions[i];
    for (std::size_t j = i; j-- > 0;) {
      Region& q = regions[j];
      if (q.contig != p.contig || q.reverse != p.reverse || p.rb >= q.re + kMaxChainGap) break;
      if (q.qe == q.qb) continue;  // already removed
      const std::int64_t on_ref = q.re - p.rb;
      const std::int64_t on_read = q.qb < p.qb ? q.qe - p.qb : p.qe - q.qb;
      const std::int64_t min_ref = std::min(q.re - q.rb, p.re - p.rb), min_read = std::min(q.qe - q.qb, p.qe - p.qb);
      if (on_ref > kRedundantOverlap * min_ref && on_read > kRedundantOverlap * min_read) {
        if (p.score < q.score) {
          p.qe = p.qb;
          break;
        }
        q.qe = q.qb;
      }
    }
  }
  regions.erase(std::remove_if(regions.begin(), regions.end(), [](const Region& r) { return r.qe == r.qb; }),
                regions.end());
  // Identical regions once; then bwa's mem_mark_primary_se: by score, ties by a hash of the read.
  std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) { return region_key(a) < region_key(b); });
  regions.erase(std::unique(regions.begin(), regions.end(),
                            [](const Region& a, const Region& b) {
                              return a.contig == b.contig && a.reverse == b.reverse && a.rb == b.rb && a.qb == b.qb &&
                                     a.score == b.score;
                            }),
                regions.end());
  for (std::size_t i = 0; i < regions.size(); ++i) regions[i].hash = mix64(read_hash + i);
  std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) {
    return a.score != b.score ? a.score > b.score : a.hash < b.hash;
  });
  const Scoring& sc = options.scoring;
  const std::int32_t close = std::max({sc.match + sc.mismatch, sc.open_del + sc.extend_del, sc.open_ins + sc.extend_ins});
  std::vector<std::size_t> primaries;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    Region& r = regions[i];
    r.sub = r.sub_n = 0;
    r.secondary = -1;
    for (std::size_t z : primaries) {
      Region& p = regions[z];
      const std::int32_t b = std::max(p.qb, r.qb), e = std::min(p.qe, r.qe);
      const std::int32_t shorter = std::min(p.qe - p.qb, r.qe - r.qb);
      if (e > b && e - b >= shorter * options.mask_level) {
        if (p.sub == 0) p.sub = r.score;
        if (p.score - r.score <= close) ++p.sub_n;
        r.secondary = static_cast<std::int32_t>(z);
        break;
      }
    }
    if (r.secondary < 0) primaries.push_back(i);
  }
}

}  // namespace wtmap::aligner::gapped
