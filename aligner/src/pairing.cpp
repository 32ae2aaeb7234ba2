#include "wtmap/aligner/pairing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <utility>

#include "wtmap/aligner/gapped/edit_tags.hpp"

namespace wtmap::aligner {
namespace {

std::int64_t round_half_up(double x) { return static_cast<std::int64_t>(std::floor(x + 0.5)); }

// A * log4 of the two-sided normal tail probability of an insert size `sigmas` standard deviations
// from the mean (bwa mem's .721 * log(2 * erfc(|ns| / sqrt 2)) * a, .721 = 1 / ln 4): 0 at the
// mean of a two-sided tail of 1, ever more negative away from it.
double insert_log_likelihood(double sigmas, int match) {
  const double tail = 2.0 * std::erfc(std::fabs(sigmas) * M_SQRT1_2);
  if (tail <= 0) return -1e9;  // beyond double's range: no pair score survives it
  return 0.721 * std::log(tail) * match;
}

// bwa mem's raw_mapq: the phred scale of a score margin, 6.02 per unit of A.
int raw_mapq(long long margin, int match) { return static_cast<int>(6.02 * static_cast<double>(margin) / match + .499); }

}  // namespace

std::string_view mate_name(std::string_view name) {
  if (name.size() >= 2 && name[name.size() - 2] == '/' && (name.back() == '1' || name.back() == '2')) {
    name.remove_suffix(2);
  }
  return name;
}

void strip_mate_suffix(std::string& name) { name.resize(mate_name(name).size()); }

InsertSizeModel estimate_insert_size(std::vector<std::int64_t> sizes) {
  InsertSizeModel m;
  m.pairs = sizes.size();
  if (sizes.size() < kMinInsertPairs) return m;
  std::sort(sizes.begin(), sizes.end());
  const double n = static_cast<double>(sizes.size());
  auto quantile = [&](double q) { return sizes[static_cast<std::size_t>(q * n + .499)]; };
  m.q25 = quantile(.25);
  m.q50 = quantile(.50);
  m.q75 = quantile(.75);
  const double iqr = static_cast<double>(m.q75 - m.q25);
  // Mean and std of the sizes within 2 interquartile ranges of the quartiles (outliers out).
  const std::int64_t lo = std::max<std::int64_t>(1, round_half_up(m.q25 - 2.0 * iqr));
  const std::int64_t hi = round_half_up(m.q75 + 2.0 * iqr);
  double sum = 0, count = 0;
  for (const std::int64_t s : sizes) {
    if (s >= lo && s <= hi) sum += static_cast<double>(s), ++count;
  }
  m.mean = sum / count;  // count >= 1: the median lies within the bounds
  double squares = 0;
  for (const std::int64_t s : sizes) {
    if (s >= lo && s <= hi) squares += (s - m.mean) * (s - m.mean);
  }
  m.std = std::sqrt(squares / count);
  // Proper pairs: within 3 interquartile ranges of the quartiles, and at least 4 std of the mean.
  m.low = std::min(round_half_up(m.q25 - 3.0 * iqr), round_half_up(m.mean - 4.0 * m.std));
  m.high = std::max(round_half_up(m.q75 + 3.0 * iqr), round_half_up(m.mean + 4.0 * m.std));
  m.low = std::max<std::int64_t>(m.low, 1);
  m.known = true;
  return m;
}

Result<InsertSizeModel> parse_insert_size(const std::string& option) {
  const Status bad = invalid_argument("-I needs mean,std[,max[,min]] with mean > 0, std >= 0 and min <= max, not '" +
                                      option + "'");
  if (option == "none") {
    InsertSizeModel none;
    none.given = true;
    return none;
  }
  std::vector<double> values;
  std::istringstream in(option);
  for (std::string field; std::getline(in, field, ',');) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(field, &used);
    } catch (const std::exception&) {
      return bad;
    }
    if (used != field.size() || !std::isfinite(v)) return bad;
    values.push_back(v);
  }
  if (values.size() < 2 || values.size() > 4 || values[0] <= 0 || values[1] < 0) return bad;
  InsertSizeModel m;
  m.known = m.given = true;
  m.mean = values[0];
  m.std = values[1];
  m.high = values.size() > 2 ? round_half_up(values[2]) : round_half_up(m.mean + 4.0 * m.std);
  m.low = std::max<std::int64_t>(1, values.size() > 3 ? round_half_up(values[3]) : round_half_up(m.mean - 4.0 * m.std));
  if (m.low > m.high) return bad;
  return m;
}

std::string insert_size_option(const InsertSizeModel& model) {
  if (!model.known) return "none";
  char text[128];
  std::snprintf(text, sizeof text, "%.17g,%.17g,%lld,%lld", model.mean, model.std, static_cast<long long>(model.high),
                static_cast<long long>(model.low));
  return text;
}

std::int64_t fr_insert_size(const MateHit& a, const MateHit& b) {
  if (a.contig != b.contig || a.reverse == b.reverse) return -1;
  const MateHit& forward = a.reverse ? b : a;
  const MateHit& backward = a.reverse ? a : b;
  if (backward.end <= forward.position + 1) return -1;  // the reverse mate's 5' end not right of the other's
  return static_cast<std::int64_t>(backward.end - 1 - forward.position);
}

PairScoring gapped_pair_scoring(const gapped::Scoring& s, int unpaired) {
  PairScoring p;
  p.match = s.match;
  p.mismatch = s.mismatch;
  p.unpaired = unpaired;
  p.near_second = std::max({s.match + s.mismatch, s.open_del + s.extend_del, s.open_ins + s.extend_ins});
  return p;
}

int ungapped_score(std::size_t length, unsigned mismatches, const PairScoring& scoring) {
  return static_cast<int>(length) * scoring.match - static_cast<int>(mismatches) * (scoring.match + scoring.mismatch);
}

bool within_bounds(const MateHit& a, const MateHit& b, const InsertSizeModel& model) {
  if (!model.known) return false;
  const std::int64_t size = fr_insert_size(a, b);
  return size >= model.low && size <= model.high;  // -1 (not FR) is below every low
}

PairChoice choose_pair(const std::vector<MateHit> (&hits)[2], const int (&mapq)[2], const InsertSizeModel& model,
                       const PairScoring& scoring, const float (&repeat_fraction)[2]) {
  PairChoice choice;
  choice.mapq[0] = mapq[0];
  choice.mapq[1] = mapq[1];
  if (!model.known || hits[0].empty() || hits[1].empty()) return choice;
  constexpr long long kNone = std::numeric_limits<long long>::min();
  // The score of the pair of hits i and j, kNone unless FR within the bounds.
  auto pair_score = [&](std::size_t i, std::size_t j) {
    if (!within_bounds(hits[0][i], hits[1][j], model)) return kNone;
    const double size = static_cast<double>(fr_insert_size(hits[0][i], hits[1][j]));
    const double sigmas = model.std > 0 ? (size - model.mean) / model.std : (size == model.mean ? 0.0 : HUGE_VAL);
    const double raw = hits[0][i].score + hits[1][j].score + insert_log_likelihood(sigmas, scoring.match);
    return std::max<long long>(0, static_cast<long long>(std::floor(raw + .499)));
  };
  long long best = kNone, second = kNone;
  for (std::size_t i = 0; i < hits[0].size(); ++i) {
    for (std::size_t j = 0; j < hits[1].size(); ++j) {
      const long long score = pair_score(i, j);
      if (score > best) {
        second = best;
        best = score;
        choice.hit[0] = i;
        choice.hit[1] = j;
      } else if (score > second) {
        second = score;
      }
    }
  }
  if (best == kNone || best == 0) {  // mem_pair found nothing: no_pairing, which flags the best hits
    choice.hit[0] = choice.hit[1] = 0;
    choice.proper = within_bounds(hits[0][0], hits[1][0], model);
    return choice;
  }
  const long long unpaired = static_cast<long long>(hits[0][0].score) + hits[1][0].score - scoring.unpaired;
  if (best <= unpaired) {
    choice.hit[0] = choice.hit[1] = 0;
    return choice;
  }
  choice.proper = true;
  // The other pairs within near_second of the second best: each lowers the pair's MAPQ.
  unsigned near_second = 0;
  for (std::size_t i = 0; i < hits[0].size(); ++i) {
    for (std::size_t j = 0; j < hits[1].size(); ++j) {
      const long long score = pair_score(i, j);
      near_second += score != kNone && !(i == choice.hit[0] && j == choice.hit[1]) && second - score <= scoring.near_second;
    }
  }
  // bwa's sub is 0 without a second pair (pair scores are never below 0).
  int pair_mapq = raw_mapq(best - std::max({0LL, second, unpaired}), scoring.match);
  if (near_second > 0) pair_mapq -= static_cast<int>(4.343 * std::log(near_second + 1.0) + .499);
  pair_mapq = std::clamp(pair_mapq, 0, 60);
  // A pair of reads in repeats is trusted no more than their seeds are unique.
  pair_mapq = static_cast<int>(pair_mapq * (1.0 - 0.5 * (repeat_fraction[0] + repeat_fraction[1])) + .499);
  for (int m = 0; m < 2; ++m) {
    const MateHit& chosen = hits[m][choice.hit[m]];
    // A hit other than the mate's best is no unique single-end hit: bwa mem recomputes its MAPQ
    // with the better hit's score as sub, which gives 0.
    const int single = choice.hit[m] == 0 ? mapq[m] : chosen.secondary || chosen.score < hits[m][0].score ? 0 : mapq[m];
    const int raised = single > pair_mapq ? single : std::min(pair_mapq, single + 40);
    // bwa's cap at the tandem repeat score (a second copy in the same rescue window).
    choice.mapq[m] = std::clamp(raw_mapq(chosen.score - chosen.tandem_sub, scoring.match), 0, raised);
  }
  return choice;
}

std::int64_t five_prime_end(std::uint64_t position, std::uint64_t end, bool reverse) {
  return static_cast<std::int64_t>(reverse ? end : position);
}

void mate_fields(const WrittenMate (&mates)[2], bool proper, MateFields (&out)[2]) {
  auto five_prime = [](const WrittenMate& m) { return five_prime_end(m.position, m.end, m.reverse); };
  for (int i = 0; i < 2; ++i) {
    const WrittenMate& self = mates[i];
    const WrittenMate& mate = mates[1 - i];
    MateFields f;
    f.flag = static_cast<std::uint16_t>(kSamPaired | (i == 0 ? kSamFirstMate : kSamSecondMate));
    if (proper) f.flag |= kSamProperPair;
    if (!mate.mapped) f.flag |= kSamMateUnmapped;
    // The mate as written: an unmapped one stands at this mapped one, with its strand.
    const WrittenMate* placed = mate.mapped ? &mate : self.mapped ? &self : nullptr;
    if (placed != nullptr) {
      f.mate_contig = static_cast<std::int32_t>(placed->contig);
      f.mate_position = static_cast<std::int64_t>(placed->position);
      if (placed->reverse) f.flag |= kSamMateReverse;
    }
    f.mapq = self.mapq;
    if (!self.mapped && mate.mapped) {
      f.contig = static_cast<std::int32_t>(mate.contig);
      f.position = static_cast<std::int64_t>(mate.position);
      f.reverse = mate.reverse;
    }
    if (self.mapped && mate.mapped && self.contig == mate.contig) f.tlen = five_prime(mate) - five_prime(self);
    f.mate_mapq = mate.mapped ? mate.mapq : 0;
    // samtools fixmate's MC (sync_mq_mc): the mate's CIGAR wherever either is mapped, so "*"
    // beside an unmapped mate.
    f.has_mate_cigar = mate.mapped || self.mapped;
    f.mate_cigar = mate.mapped ? mate.cigar : "*";
    if (mate.mapped) f.mate_five_prime = five_prime(mate);
    out[i] = std::move(f);
  }
}

MateFields supplementary_mate_fields(const MateFields& primary, const gapped::GappedHit& line,
                                     bool soft_clip_supplementary) {
  MateFields f = primary;
  if ((primary.flag & kSamMateUnmapped) != 0) {  // the unmapped mate placed at this line
    f.mate_contig = static_cast<std::int32_t>(line.contig);
    f.mate_position = static_cast<std::int64_t>(line.position);
    f.flag = static_cast<std::uint16_t>((f.flag & ~kSamMateReverse) | (line.reverse ? kSamMateReverse : 0));
    f.tlen = 0;
    return f;
  }
  const std::int64_t own_five_prime = five_prime_end(line.position, line.reference_end, line.reverse);
  f.tlen = primary.mate_contig == static_cast<std::int32_t>(line.contig)
               ? primary.mate_five_prime - own_five_prime
               : 0;
  if (!soft_clip_supplementary) std::replace(f.mate_cigar.begin(), f.mate_cigar.end(), 'S', 'H');
  return f;
}

void PairTotals::add(const MateFields& first, const MateFields& second) {
  // Each mate's 0x8 says whether the other is unmapped; mate_contig is the other's contig.
  const bool mapped[2] = {(second.flag & kSamMateUnmapped) == 0, (first.flag & kSamMateUnmapped) == 0};
  ++pairs;
  proper += (first.flag & kSamProperPair) != 0;
  both_mapped += mapped[0] && mapped[1];
  singletons += mapped[0] != mapped[1];
  different_contigs += mapped[0] && mapped[1] && first.mate_contig != second.mate_contig;
  mates_mapq_positive += (mapped[0] && first.mapq > 0) + (mapped[1] && second.mapq > 0);
}

std::vector<MateHit> mate_hits(const ReadAlignment& a, std::size_t length, const PairScoring& scoring) {
  std::vector<MateHit> hits;
  if (!a.mapped) return hits;
  // The alternatives are other places of the same read: secondary to the primary.
  auto hit = [&](const Placement& p, bool secondary) {
    return MateHit{p.contig, p.position, p.position + length, p.reverse, ungapped_score(length, p.edits.count(), scoring),
                   secondary};
  };
  hits.push_back(hit(a.primary, false));
  for (const Placement& p : a.alternatives) hits.push_back(hit(p, true));
  return hits;
}

void pair_mismatch_mates(ReadAlignment (&mates)[2], const std::size_t (&lengths)[2], unsigned max_mismatches,
                         const InsertSizeModel& model, const PairScoring& scoring, MateFields (&out)[2]) {
  const std::vector<MateHit> hits[2] = {mate_hits(mates[0], lengths[0], scoring), mate_hits(mates[1], lengths[1], scoring)};
  const int mapq[2] = {mates[0].mapped ? mapping_quality(mates[0], max_mismatches) : 0,
                       mates[1].mapped ? mapping_quality(mates[1], max_mismatches) : 0};
  auto promote = [](ReadAlignment& a, std::size_t alternative) {
    std::swap(a.primary, a.alternatives[alternative]);
    a.mismatches = static_cast<std::uint8_t>(a.primary.edits.count());
  };
  auto written = [&lengths](const ReadAlignment& a, int m, int mapq_after) {
    const std::size_t length = lengths[m];
    return WrittenMate{a.mapped, a.primary.contig, a.primary.position, a.primary.position + length,
                       a.primary.reverse, mapq_after, std::to_string(length) + "M"};
  };
  pair_mates(mates, hits, mapq, model, scoring, promote, written, out);
}

RescueWindow rescue_window(const MateHit& anchor, std::size_t mate_length, const InsertSizeModel& model,
                           std::uint64_t contig_length) {
  RescueWindow w;
  w.contig = anchor.contig;
  w.reverse = !anchor.reverse;
  if (!model.known) return w;
  const auto length = static_cast<std::int64_t>(mate_length);
  const auto contig = static_cast<std::int64_t>(contig_length);
  std::int64_t begin = 0, end = 0;
  // bwa's windows (mem_matesw) to the base: the mate's 5' end lies at insert sizes [low, high]
  // from the anchor's (fr_insert_size), and the window stops where bwa's does, so that a mate
  // at exactly `high` overhangs it by one base there as in bwa.
  if (!anchor.reverse) {  // the mate's last base lies in anchor.position + [low, high]
    const auto from = static_cast<std::int64_t>(anchor.position);
    begin = from + model.low - length;
    end = from + model.high;
  } else {  // the mate's start lies in anchor.end - 1 - [high, low]
    const auto to = static_cast<std::int64_t>(anchor.end);
    begin = to - model.high;
    end = to - model.low + length;
  }
  begin = std::clamp<std::int64_t>(begin, 0, contig);
  end = std::clamp<std::int64_t>(end, begin, contig);
  w.begin = static_cast<std::uint64_t>(begin);
  w.end = static_cast<std::uint64_t>(end);
  return w;
}

MateHit rescued_hit(const RescueWindow& window, std::int64_t target_begin, std::int64_t target_end, int score) {
  return MateHit{window.contig, window.begin + static_cast<std::uint64_t>(target_begin),
                 window.begin + static_cast<std::uint64_t>(target_end), window.reverse, score};
}

std::int64_t sampled_insert_size(const gapped::GappedReadAlignment (&mates)[2]) {
  for (const gapped::GappedReadAlignment& a : mates) {
    if (!a.mapped || 5.0 * a.sub_score > 4.0 * a.primary.score) return -1;  // sub > 0.8 score
  }
  const std::int64_t size = fr_insert_size(mate_hits(mates[0])[0], mate_hits(mates[1])[0]);
  return size > kMaxSampledInsert ? -1 : size;
}

std::vector<gapped::PairCandidate> pairing_candidates(const gapped::GappedReadAlignment& a) {
  if (!a.mapped) return {};
  if (!a.candidates.empty()) return a.candidates;
  auto candidate = [](const gapped::GappedHit& h, std::int32_t secondary) {
    return gapped::PairCandidate{h.contig, h.position, h.reference_end, h.reverse, h.query_begin, h.query_end,
                                 h.score, h.score, secondary};
  };
  std::vector<gapped::PairCandidate> c{candidate(a.primary, -1)};
  for (const gapped::GappedHit& h : a.alternatives) c.push_back(candidate(h, 0));
  return c;
}

namespace {
std::vector<MateHit> hits_of(const std::vector<gapped::PairCandidate>& candidates) {
  std::vector<MateHit> hits;
  hits.reserve(candidates.size());
  for (const gapped::PairCandidate& c : candidates) {
    hits.push_back({c.contig, c.position, c.reference_end, c.reverse, c.score, c.secondary >= 0, c.tandem_sub});
  }
  return hits;
}
}  // namespace

std::vector<MateHit> mate_hits(const gapped::GappedReadAlignment& a) { return hits_of(pairing_candidates(a)); }

PairChoice choose_gapped_pair(const gapped::GappedReadAlignment& first, const gapped::GappedReadAlignment& second,
                              const InsertSizeModel& model, const PairScoring& scoring,
                              std::vector<gapped::PairCandidate> (&candidates)[2]) {
  candidates[0] = pairing_candidates(first);
  candidates[1] = pairing_candidates(second);
  const std::vector<MateHit> hits[2] = {hits_of(candidates[0]), hits_of(candidates[1])};
  const int mapq[2] = {first.mapped ? first.mapq : 0, second.mapped ? second.mapq : 0};
  // bwa mem pairs no split read (mem_sam_pe's is_multi: another primary region scoring -T): both
  // mates are written at their primaries with their single-end MAPQs (no_pairing), proper if those
  // are within the bounds.
  const bool split = (first.mapped && !first.supplementary.empty()) || (second.mapped && !second.supplementary.empty());
  if (split) {
    PairChoice choice;
    choice.mapq[0] = mapq[0];
    choice.mapq[1] = mapq[1];
    choice.proper = !hits[0].empty() && !hits[1].empty() && within_bounds(hits[0][0], hits[1][0], model);
    return choice;
  }
  const float repeats[2] = {first.repeat_fraction, second.repeat_fraction};
  return choose_pair(hits, mapq, model, scoring, repeats);
}

std::vector<std::size_t> gapped_written_candidates(const std::vector<gapped::PairCandidate>& candidates,
                                                   std::size_t chosen, const PairScoring& scoring) {
  std::vector<std::size_t> written{chosen};
  // mem_sam_pe's switch: the chosen one's primary and that primary's secondaries become the
  // chosen one's secondaries (a primary chosen keeps its own).
  const std::int32_t leader = candidates[chosen].secondary >= 0 ? candidates[chosen].secondary
                                                                : static_cast<std::int32_t>(chosen);
  const double bar = scoring.xa_drop_ratio * candidates[chosen].score;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const bool in_group = static_cast<std::int32_t>(k) == leader || candidates[k].secondary == leader;
    if (k != chosen && in_group && candidates[k].score >= bar) written.push_back(k);
  }
  if (written.size() - 1 > scoring.max_xa_hits) written.resize(1);
  return written;
}

bool is_hit_of(const gapped::GappedHit& h, const gapped::PairCandidate& c) {
  return h.contig == c.contig && h.reverse == c.reverse && h.position == c.position &&
         h.reference_end == c.reference_end && h.query_begin == c.query_begin && h.query_end == c.query_end &&
         h.score == c.score;
}

const gapped::GappedHit* hit_of_candidate(const gapped::GappedReadAlignment& a, const gapped::PairCandidate& c) {
  if (!a.mapped) return nullptr;
  if (is_hit_of(a.primary, c)) return &a.primary;
  for (const std::vector<gapped::GappedHit>* list : {&a.alternatives, &a.supplementary, &a.pair_hits}) {
    for (const gapped::GappedHit& h : *list) {
      if (is_hit_of(h, c)) return &h;
    }
  }
  return nullptr;
}

namespace {
// The hits a mate written at candidate `chosen` shows (gapped_written_candidates); false if one
// of them has no hit (no CIGAR computed).
bool written_hits(const gapped::GappedReadAlignment& a, const std::vector<gapped::PairCandidate>& candidates,
                  std::size_t chosen, const PairScoring& scoring, std::vector<gapped::GappedHit>& out) {
  for (const std::size_t k : gapped_written_candidates(candidates, chosen, scoring)) {
    const gapped::GappedHit* h = hit_of_candidate(a, candidates[k]);
    if (h == nullptr) return false;
    out.push_back(*h);
  }
  return true;
}
}  // namespace

void pair_gapped_mates(gapped::GappedReadAlignment (&mates)[2], const InsertSizeModel& model,
                       const PairScoring& scoring, MateFields (&out)[2]) {
  std::vector<gapped::PairCandidate> candidates[2];
  PairChoice choice = choose_gapped_pair(mates[0], mates[1], model, scoring, candidates);
  std::vector<gapped::GappedHit> written[2];
  bool ready = true;
  for (int m = 0; m < 2; ++m) {
    if (choice.hit[m] > 0) ready = ready && written_hits(mates[m], candidates[m], choice.hit[m], scoring, written[m]);
  }
  if (!ready) choice = PairChoice{false, {0, 0}, {mates[0].mapped ? mates[0].mapq : 0, mates[1].mapped ? mates[1].mapq : 0}};
  WrittenMate as_written[2];
  for (int m = 0; m < 2; ++m) {
    gapped::GappedReadAlignment& a = mates[m];
    if (choice.hit[m] > 0) {
      // bwa mem's: a secondary chosen takes its primary's score as its sub-score (XS).
      const gapped::PairCandidate& chosen = candidates[m][choice.hit[m]];
      if (chosen.secondary >= 0) a.sub_score = candidates[m][static_cast<std::size_t>(chosen.secondary)].score;
      a.primary = std::move(written[m].front());
      a.alternatives.assign(std::make_move_iterator(written[m].begin() + 1), std::make_move_iterator(written[m].end()));
    }
    // The pair's MAPQ is the mate's MAPQ from now on.
    a.mapq = static_cast<std::uint8_t>(choice.mapq[m]);
    as_written[m] = WrittenMate{a.mapped, a.primary.contig, a.primary.position, a.primary.reference_end,
                                a.primary.reverse, choice.mapq[m], gapped::cigar_text(a.primary.cigar)};
  }
  mate_fields(as_written, choice.proper, out);
}

std::int64_t sampled_insert_size(const ReadAlignment (&mates)[2], const std::size_t (&lengths)[2],
                                 unsigned max_mismatches) {
  for (const ReadAlignment& a : mates) {
    if (!a.mapped || a.best_count != 1 || mapping_quality(a, max_mismatches) < kConfidentMapq) return -1;
  }
  const PairScoring unused;
  const std::int64_t size = fr_insert_size(mate_hits(mates[0], lengths[0], unused)[0], mate_hits(mates[1], lengths[1], unused)[0]);
  return size > kMaxSampledInsert ? -1 : size;
}

}  // namespace wtmap::aligner
