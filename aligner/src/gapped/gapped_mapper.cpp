// The gapped mapper (see gapped_mapper.hpp): SMEM seeding and locate on the index's backend
// (SmemSeeder, FmIndex::locate), then chaining, extension, region selection and the CIGARs on the
// host for both backends (mapper_steps.hpp) -- the same functions on the same inputs, so the
// backends give the same bytes, and every read is mapped on its own, so any batch size does too.
#include <algorithm>
#include <tuple>

#include "mapper_reference.hpp"
#include "mapper_steps.hpp"
#include "wtmap/aligner/gapped/edit_tags.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/aligner/gapped/global.hpp"
#include "wtmap/aligner/mismatch_search.hpp"
#include "wtmap/fmindex/reference.hpp"
#include "wtmap/fmindex/smem_seeder.hpp"

namespace wtmap::aligner::gapped {

namespace {

// Seeds a read may keep (SmemResult's kSeedsOverflow beyond): a read has at most one SMEM per
// base per pass, three passes.
std::uint32_t seed_capacity(std::uint32_t read_length) { return 3 * read_length + 16; }

constexpr std::uint32_t kCigarSoftClip = 4;

// A read's codes and their reverse complement.
struct ReadCodes {
  std::vector<std::uint8_t> forward, reverse;
  std::uint64_t hash = 0;
};

ReadCodes encode(const std::string& sequence) {
  ReadCodes r;
  r.forward.resize(sequence.size());
  r.reverse.resize(sequence.size());
  r.hash = 1469598103934665603ull;  // FNV-1a: ties between equal scores follow the read
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    const std::uint8_t c = fmindex::search_code(sequence[i]);
    r.forward[i] = c;
    r.reverse[sequence.size() - 1 - i] = c < 4 ? static_cast<std::uint8_t>(3 - c) : c;
    r.hash = (r.hash ^ c) * 1099511628211ull;
  }
  return r;
}

// Read bases inside seeds of more than max_occurrences hits (bwa's l_rep), as a share of the read.
float repeat_fraction(const fmindex::Seed* seeds, std::uint32_t count, std::uint64_t max_occ, std::uint32_t length) {
  std::uint32_t covered = 0, begin = 0, end = 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    const fmindex::Seed& s = seeds[k];
    if (s.bi.size <= max_occ) continue;
    if (s.begin > end) {
      covered += end - begin;
      begin = s.begin;
      end = s.end;
    } else {
      end = std::max(end, s.end);
    }
  }
  covered += end - begin;
  return length == 0 ? 0.f : static_cast<float>(covered) / static_cast<float>(length);
}

}  // namespace

struct GappedMapper::Impl {
  Impl(const fmindex::FmIndex& i, const GappedOptions& o, MapperReference r)
      : index(&i), options(o), reference(std::move(r)), seeder(i) {}

  const fmindex::FmIndex* index;
  GappedOptions options;
  MapperReference reference;
  fmindex::SmemSeeder seeder;

  // Per batch: the seeds and their located occurrences.
  std::vector<std::uint8_t> codes;
  std::vector<fmindex::SeedingRead> seeding;
  std::vector<fmindex::Seed> seeds;
  std::vector<fmindex::SmemResult> seeded;
  std::vector<std::uint64_t> rows, positions;
  // Per read scratch.
  std::vector<std::uint8_t> window, target, forward_ref;
  std::vector<std::int32_t> dp_rows;
  std::vector<std::uint8_t> global_scratch;
  std::vector<std::uint32_t> cigar;

  Status seed_and_locate(const std::vector<SeqRecord>& reads, const std::vector<ReadCodes>& encoded,
                         std::vector<std::uint64_t>& first_position);
  std::vector<SeedHit> seed_hits(std::size_t read, const std::vector<std::uint64_t>& first_position);
  Status map_read(const ReadCodes& read, const std::vector<SeedHit>& hits, float repeat, GappedReadAlignment& out);
  Status make_hit(const Region& region, const ReadCodes& read, GappedHit& hit);
};

Status GappedMapper::Impl::seed_and_locate(const std::vector<SeqRecord>& reads, const std::vector<ReadCodes>& encoded,
                                           std::vector<std::uint64_t>& first_position) {
  codes.clear();
  seeding.assign(reads.size(), {});
  std::uint64_t seed_total = 0;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const auto length = static_cast<std::uint32_t>(encoded[i].forward.size());
    fmindex::SeedingRead& s = seeding[i];
    s.offset = codes.size();
    s.seed_offset = seed_total;
    const bool searched = length >= options.min_seed_length && length <= options.max_read_length;
    s.length = searched ? length : 0;
    s.seed_capacity = searched ? seed_capacity(length) : 0;
    codes.insert(codes.end(), encoded[i].forward.begin(), encoded[i].forward.begin() + s.length);
    seed_total += s.seed_capacity;
  }
  seeds.resize(std::max<std::uint64_t>(seed_total, 1));
  seeded.assign(reads.size(), {});
  fmindex::SmemParams params;
  params.min_seed_len = options.min_seed_length;
  WTMAP_TRY(seeder.find(codes.data(), codes.size(), seeding.data(), seeding.size(), params, seeds.data(), seeds.size(),
                        seeded.data()));
  // Every row of every seed with at most max_occurrences hits, read by read, seed by seed.
  rows.clear();
  first_position.assign(reads.size() + 1, 0);
  for (std::size_t i = 0; i < reads.size(); ++i) {
    first_position[i] = rows.size();
    const fmindex::Seed* s = seeds.data() + seeding[i].seed_offset;
    for (std::uint32_t k = 0; k < seeded[i].count; ++k) {
      if (s[k].bi.size > options.max_occurrences) continue;
      for (std::uint64_t r = 0; r < s[k].bi.size; ++r) rows.push_back(s[k].bi.x0 + r);
    }
  }
  first_position[reads.size()] = rows.size();
  positions.resize(rows.size());
  if (!rows.empty()) WTMAP_TRY(index->locate(rows.data(), positions.data(), rows.size()));
  return {};
}

std::vector<SeedHit> GappedMapper::Impl::seed_hits(std::size_t read, const std::vector<std::uint64_t>& first_position) {
  std::vector<SeedHit> hits;
  const fmindex::Seed* s = seeds.data() + seeding[read].seed_offset;
  std::uint64_t p = first_position[read];
  for (std::uint32_t k = 0; k < seeded[read].count; ++k) {
    if (s[k].bi.size > options.max_occurrences) continue;
    const std::size_t first = hits.size();
    for (std::uint64_t r = 0; r < s[k].bi.size; ++r, ++p) {
      const StrandPosition at = reference.place(positions[p], s[k].length());
      hits.push_back({at.contig, at.reverse, at.position, static_cast<std::int32_t>(s[k].begin),
                      static_cast<std::int32_t>(s[k].length())});
    }
    // A seed's occurrences in reference order, not the suffix array's.
    std::sort(hits.begin() + first, hits.end(), [](const SeedHit& a, const SeedHit& b) {
      return std::make_tuple(a.contig, a.reverse, a.rbeg) < std::make_tuple(b.contig, b.reverse, b.rbeg);
    });
  }
  return hits;
}

Status GappedMapper::Impl::make_hit(const Region& region, const ReadCodes& read, GappedHit& hit) {
  const Scoring& sc = options.scoring;
  const auto qlen = static_cast<std::uint32_t>(region.qe - region.qb);
  const auto tlen = static_cast<std::uint32_t>(region.re - region.rb);
  target.resize(tlen);
  for (std::uint32_t i = 0; i < tlen; ++i) target[i] = reference.base(region.contig, region.reverse, region.rb + i);
  const std::int32_t band = global_band_for_score(qlen, tlen, region.true_score, sc);
  global_scratch.resize(global_scratch_bytes(qlen, tlen, band) + 16);
  const std::uint32_t capacity = global_max_cigar_ops(qlen, tlen);
  cigar.resize(capacity + 2);
  const GlobalResult g = global_align(ForwardCodes{read.forward.data() + region.qb}, qlen, ForwardCodes{target.data()},
                                      tlen, sc, band, global_scratch.data(), cigar.data() + 1, capacity);
  if (g.n_cigar == 0 && qlen + tlen > 0)
    return Status(StatusCode::invalid_argument, "gapped: CIGAR of a region did not fit");
  // Strand order with the soft clips, then SAM order (along the forward strand).
  const auto length = static_cast<std::uint32_t>(read.forward.size());
  hit.cigar.clear();
  if (region.qb > 0) hit.cigar.push_back(static_cast<std::uint32_t>(region.qb) << 4 | kCigarSoftClip);
  hit.cigar.insert(hit.cigar.end(), cigar.begin() + 1, cigar.begin() + 1 + g.n_cigar);
  if (static_cast<std::uint32_t>(region.qe) < length)
    hit.cigar.push_back((length - static_cast<std::uint32_t>(region.qe)) << 4 | kCigarSoftClip);
  const std::uint64_t contig_length = reference.contig_length(region.contig);
  hit.contig = region.contig;
  hit.reverse = region.reverse;
  hit.position = static_cast<std::uint64_t>(region.reverse ? contig_length - region.re : region.rb);
  hit.reference_end = hit.position + tlen;
  hit.query_begin = static_cast<std::uint32_t>(region.qb);
  hit.query_end = static_cast<std::uint32_t>(region.qe);
  hit.score = region.score;
  if (region.reverse) std::reverse(hit.cigar.begin(), hit.cigar.end());
  // NM and MD along the forward strand: the read as SAM holds it against the contig.
  const std::vector<std::uint8_t>& sam_read = region.reverse ? read.reverse : read.forward;
  const std::uint32_t lead = region.reverse ? length - static_cast<std::uint32_t>(region.qe) : region.qb;
  forward_ref.resize(tlen);
  for (std::uint32_t i = 0; i < tlen; ++i) forward_ref[i] = reference.base(region.contig, false, hit.position + i);
  const std::uint32_t* ops = hit.cigar.data() + (lead > 0 ? 1 : 0);
  Result<EditTags> tags = edit_tags(sam_read.data() + lead, qlen, forward_ref.data(), tlen, ops, g.n_cigar);
  if (!tags.ok()) return tags.status();
  hit.edit_distance = tags->nm;
  hit.md = std::move(tags->md);
  return {};
}

Status GappedMapper::Impl::map_read(const ReadCodes& read, const std::vector<SeedHit>& hits, float repeat,
                                    GappedReadAlignment& out) {
  const auto length = static_cast<std::int32_t>(read.forward.size());
  std::vector<Chain> chains = chain_seeds(hits, options);
  std::vector<Region> regions;
  for (std::size_t k = 0; k < chains.size(); ++k)
    extend_chain(chains[k], static_cast<std::int32_t>(k), read.forward.data(), length, reference, options, regions,
                 window, dp_rows);
  finish_regions(regions, chains, read.hash, options);
  out.repeat_fraction = repeat;
  if (regions.empty() || regions[0].score < options.min_output_score) return {};
  const Region& best = regions[0];
  out.mapped = true;
  WTMAP_TRY(make_hit(best, read, out.primary));
  out.sub_score = best.sub;
  out.sub_count = static_cast<std::uint32_t>(best.sub_n);
  out.chain_sub_score = best.csub;
  out.seed_coverage = static_cast<std::uint32_t>(best.seed_coverage);
  // Alternatives: the primary's secondaries scoring close to it, all or none (bwa's XA).
  std::vector<const Region*> alternatives;
  for (std::size_t i = 1; i < regions.size(); ++i) {
    const Region& r = regions[i];
    if (r.secondary == 0 && r.score >= options.xa_drop_ratio * best.score) alternatives.push_back(&r);
  }
  if (alternatives.size() <= options.max_xa_hits) {
    for (const Region* r : alternatives) {
      out.alternatives.emplace_back();
      WTMAP_TRY(make_hit(*r, read, out.alternatives.back()));
    }
  }
  // Supplementary: the other primaries (other parts of a chimeric read) that score enough.
  for (std::size_t i = 1; i < regions.size(); ++i) {
    if (regions[i].secondary >= 0 || regions[i].score < options.min_output_score) continue;
    out.supplementary.emplace_back();
    WTMAP_TRY(make_hit(regions[i], read, out.supplementary.back()));
  }
  return {};
}

GappedMapper::GappedMapper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GappedMapper::GappedMapper(GappedMapper&&) noexcept = default;
GappedMapper& GappedMapper::operator=(GappedMapper&&) noexcept = default;
GappedMapper::~GappedMapper() = default;

const GappedOptions& GappedMapper::options() const { return impl_->options; }

Result<GappedMapper> GappedMapper::create(const fmindex::FmIndex& index, const GappedOptions& options) {
  if (!options.scoring.valid()) return invalid_argument("gapped: invalid scoring (penalties >= 0, match > 0)");
  if (options.min_seed_length == 0) return invalid_argument("gapped: the minimum seed length must be positive");
  if (!index.can_locate()) return invalid_argument("gapped alignment needs an index that can locate (not search_only)");
  Result<MapperReference> reference = MapperReference::create(index);
  if (!reference.ok()) return reference.status();
  return GappedMapper(std::make_unique<Impl>(index, options, std::move(reference).value()));
}

Status GappedMapper::map(const std::vector<SeqRecord>& reads, std::vector<GappedReadAlignment>& alignments) {
  Impl& m = *impl_;
  std::vector<ReadCodes> encoded(reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) encoded[i] = encode(reads[i].sequence);
  std::vector<std::uint64_t> first_position;
  WTMAP_TRY(m.seed_and_locate(reads, encoded, first_position));
  alignments.assign(reads.size(), {});
  for (std::size_t i = 0; i < reads.size(); ++i) {
    GappedReadAlignment& a = alignments[i];
    const std::size_t length = encoded[i].forward.size();
    if (length < m.options.min_seed_length) {
      a.flags = kTooShort;
      continue;
    }
    if (length > m.options.max_read_length) {
      a.flags = kTooLong;
      continue;
    }
    const float repeat = repeat_fraction(m.seeds.data() + m.seeding[i].seed_offset, m.seeded[i].count,
                                         m.options.max_occurrences, static_cast<std::uint32_t>(length));
    WTMAP_TRY(m.map_read(encoded[i], m.seed_hits(i, first_position), repeat, a));
    if (a.mapped) a.mapq = mapping_quality(a, m.options);
  }
  return {};
}

}  // namespace wtmap::aligner::gapped
