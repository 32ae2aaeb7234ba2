#include "wtmap/aligner/sam_writer.hpp"

#include <htslib/hfile.h>
#include <htslib/sam.h>
#include <htslib/thread_pool.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

#include "bam_block_writer.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/aligner/gapped/edit_tags.hpp"
#include "wtmap/io/output_file.hpp"

namespace wtmap::aligner {
namespace {

#ifndef WTMAP_VERSION
#error "WTMAP_VERSION must be project()'s version (aligner/CMakeLists.txt)"
#endif
constexpr char kVersion[] = WTMAP_VERSION;

// "\t" escapes of -R to real tabs.
std::string unescape_tabs(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == 't') {
      out += '\t';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The @RG header line of -R (tabs written as \t): one line of tab-separated TAG:value fields
// beginning with ID. bwa mem's rules: a literal tab is refused (a shell that passed one was not
// asked to), and so is a line break, which would slip further header lines in; and any other byte
// a SAM header value cannot hold (SAM v1 section 1.3: [ -~]), the ID going into every RG:Z tag too.
Result<std::string> read_group_line(const std::string& option) {
  if (option.empty()) return std::string();
  for (const char c : option) {
    if (c == '\t') return invalid_argument("-R holds a literal tab; write tabs as \\t");
    if (c == '\n' || c == '\r') return invalid_argument("-R holds a line break; it must be one header line");
    const auto byte = static_cast<unsigned char>(c);
    if (byte < ' ' || byte > '~') {
      return invalid_argument("-R holds byte " + std::to_string(byte) + "; a SAM header holds printable ASCII only");
    }
  }
  const std::string rg = unescape_tabs(option);
  const auto id = rg.find("\tID:");
  if (rg.rfind("@RG\t", 0) != 0 || id == std::string::npos || id + 4 == rg.size() || rg[id + 4] == '\t') {
    return invalid_argument("-R must look like '@RG\\tID:name\\t...', got '" + option + "'");
  }
  return rg;
}

constexpr char sam_base(char c) {
  switch (c) {
    case 'A': case 'a': return 'A';
    case 'C': case 'c': return 'C';
    case 'G': case 'g': return 'G';
    case 'T': case 't': case 'U': case 'u': return 'T';
    default: return 'N';
  }
}

constexpr char complement(char c) {
  switch (c) {
    case 'A': return 'T';
    case 'C': return 'G';
    case 'G': return 'C';
    case 'T': return 'A';
    default: return 'N';
  }
}

// sam_base and complement(sam_base) of every byte: a read's letters are random, and the switches
// mispredict most of them (sam_bases was the pool threads' first symbol in a gapped run, perf on
// an H100 host).
struct SamBaseTables {
  std::array<char, 256> forward{}, reverse{};
  constexpr SamBaseTables() {
    for (unsigned b = 0; b < 256; ++b) {
      forward[b] = sam_base(static_cast<char>(b));
      reverse[b] = complement(forward[b]);
    }
  }
};
constexpr SamBaseTables kSamBaseTables;

// A read's bases and qualities as SAM stores them: A/C/G/T/N, and reverse complemented (qualities
// reversed) for a hit on the reverse strand. qual stays empty for a read without qualities.
struct SamBases {
  std::string seq, qual;
};

// Fills `out`, whose strings keep their memory from one record to the next (a formatting thread
// holds one).
void sam_bases(const SeqRecord& read, bool reverse, SamBases& out) {
  const std::size_t len = read.sequence.size();
  const auto* letters = reinterpret_cast<const unsigned char*>(read.sequence.data());
  out.seq.resize(len);
  out.qual.resize(read.quality.empty() ? 0 : len);
  // A loop for each strand, so that the forward strand's run straight (its qualities in SIMD
  // steps): 1.8 K instructions a 150 bp read, against 2.6 K for one loop choosing the index at
  // every base (callgrind, 10^4 mason reads).
  const auto phred = [](char q) { return static_cast<char>(q - 33); };
  if (!reverse) {
    for (std::size_t i = 0; i < len; ++i) out.seq[i] = kSamBaseTables.forward[letters[i]];
    std::transform(read.quality.begin(), read.quality.begin() + out.qual.size(), out.qual.begin(), phred);
    return;
  }
  for (std::size_t i = 0; i < len; ++i) out.seq[len - 1 - i] = kSamBaseTables.reverse[letters[i]];
  std::transform(read.quality.begin(), read.quality.begin() + out.qual.size(), out.qual.rbegin(), phred);
}

// The read bases a CIGAR spans (M, I, S, =, X), or an error for an operation a local alignment
// does not make (N, H, P: a gapped hit has its clips soft).
Result<std::uint64_t> gapped_query_length(const std::vector<std::uint32_t>& cigar) {
  std::uint64_t length = 0;
  for (const std::uint32_t op : cigar) {
    switch (bam_cigar_op(op)) {
      case BAM_CMATCH: case BAM_CINS: case BAM_CSOFT_CLIP: case BAM_CEQUAL: case BAM_CDIFF: length += bam_cigar_oplen(op); break;
      case BAM_CDEL: break;
      default: return invalid_argument(std::string("a gapped hit's CIGAR holds '") + bam_cigar_opchr(op) + "'");
    }
  }
  return length;
}

// An unmapped record's SEQ and QUAL turned to the reverse strand in place (4-bit codes: the
// complement of a base is its bits reversed, A=1 <-> T=8, C=2 <-> G=4, N=15 itself).
void reverse_complement_record(bam1_t* b) {
  static constexpr std::uint8_t kComplement[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  const int len = b->core.l_qseq;
  std::uint8_t* seq = bam_get_seq(b);
  std::uint8_t* qual = bam_get_qual(b);
  auto base = [seq](int i) { return static_cast<std::uint8_t>(bam_seqi(seq, i)); };
  auto set_base = [seq](int i, std::uint8_t code) {
    seq[i >> 1] = static_cast<std::uint8_t>((i & 1) != 0 ? (seq[i >> 1] & 0xF0) | code : (seq[i >> 1] & 0x0F) | code << 4);
  };
  for (int i = 0, j = len - 1; i <= j; ++i, --j) {
    const std::uint8_t left = base(i), right = base(j);
    set_base(i, kComplement[right]);
    set_base(j, kComplement[left]);
    std::swap(qual[i], qual[j]);
  }
}

// A mate's pair fields over the record format() made of it; a supplementary line keeps its MAPQ.
Status add_mate_fields(const MateFields& f, bam1_t* b) {
  b->core.flag |= f.flag;
  b->core.mtid = f.mate_contig;
  b->core.mpos = f.mate_position;
  b->core.isize = f.tlen;
  const bool unmapped = (b->core.flag & BAM_FUNMAP) != 0;
  if (!unmapped && (b->core.flag & BAM_FSUPPLEMENTARY) == 0) b->core.qual = static_cast<std::uint8_t>(std::clamp(f.mapq, 0, 254));
  if (unmapped && f.contig >= 0) {  // placed at its mate, on its strand: sorts beside it
    b->core.tid = f.contig;
    b->core.pos = f.position;
    b->core.bin = static_cast<std::uint16_t>(hts_reg2bin(f.position, f.position + 1, 14, 5));
    if (f.reverse && (b->core.flag & BAM_FREVERSE) == 0) {
      b->core.flag |= BAM_FREVERSE;
      reverse_complement_record(b);
    }
  }
  // MQ, then MC: the order samtools fixmate writes them in.
  const bool ok = bam_aux_update_int(b, "MQ", std::clamp(f.mate_mapq, 0, 254)) == 0 &&
                  (!f.has_mate_cigar || bam_aux_update_str(b, "MC", -1, f.mate_cigar.c_str()) == 0);
  if (!ok) return {StatusCode::out_of_memory, "cannot add MC and MQ to a record"};
  return {};
}

}  // namespace

std::string md_tag(const Placement& p, std::size_t length) {
  struct Mismatch {
    std::size_t at;
    char base;
  };
  std::vector<Mismatch> m;
  for (unsigned e = 0; e < p.edits.count(); ++e) {
    const std::size_t i = p.edits.position(e);
    const char ref = "ACGT"[p.edits.base(e)];
    m.push_back(p.reverse ? Mismatch{length - 1 - i, complement(ref)} : Mismatch{i, ref});
  }
  std::sort(m.begin(), m.end(), [](const Mismatch& a, const Mismatch& b) { return a.at < b.at; });
  std::string md;
  std::size_t next = 0;
  for (const Mismatch& x : m) {
    md += std::to_string(x.at - next);
    md += x.base;
    next = x.at + 1;
  }
  md += std::to_string(length - next);
  return md;
}

// BAI's bins cover positions below 2^29 (SAM spec, section 5.3); a longer contig needs a CSI index,
// with the bin sizes of samtools index -c (min_shift 14).
constexpr std::uint64_t kBaiLimit = std::uint64_t{1} << 29;
constexpr int kCsiMinShift = 14;

// An htslib thread pool, shared by a sorted output and its sorter's runs (one set of threads for
// all of them, as samtools sort shares one).
struct ThreadPool {
  hts_tpool* pool = nullptr;
  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() {
    if (pool != nullptr) hts_tpool_destroy(pool);
  }
  Status start(unsigned threads) {
    pool = hts_tpool_init(static_cast<int>(threads));
    if (pool == nullptr) return {StatusCode::out_of_memory, "cannot start the output's threads"};
    return {};
  }
};

struct SamWriter::Impl {
  ThreadPool threads;  // first: outlives the files and the sorter that use it
  SamOptions options;
  SamFormat output_format = SamFormat::sam;
  std::optional<io::OutputFile> output;  // none for stdout
  std::optional<io::OutputFile> index;   // sorted output only
  int index_min_shift = 0;               // 0: BAI; else CSI's (htslib's sam_idx_init)
  std::optional<CoordinateSorter> sorter;
  std::function<void(const std::string&)> sort_note;
  samFile* file = nullptr;                 // none where bam_blocks writes the output
  std::optional<BamBlockWriter> bam_blocks;  // unsorted BAM at level 1 (SamOptions::compression_level)
  sam_hdr_t* header = nullptr;
  std::string read_group_id;
  std::vector<std::string> contig_names;
  // One record per read of the largest batch so far, reused batch after batch: a batch formats
  // into them on all threads, and no record is allocated or freed per read.
  std::vector<bam1_t*> records;
  std::vector<const bam1_t*> ordered;  // a batch's records in output order
  Times times;
  Counts counts;

  // Counts() of a read's primary record.
  void count(const bam1_t* primary) {
    const std::uint16_t flag = primary->core.flag;
    if ((flag & BAM_FUNMAP) == 0) ++counts.primary_mapq[primary->core.qual];
    if ((flag & (BAM_FPROPER_PAIR | BAM_FREAD1)) == (BAM_FPROPER_PAIR | BAM_FREAD1)) {
      const double insert = static_cast<double>(std::llabs(primary->core.isize));
      ++counts.proper_pairs;
      counts.insert_sum += insert;
      counts.insert_squares += insert * insert;
    }
  }

  ~Impl() {
    for (bam1_t* b : records) bam_destroy1(b);
    if (header != nullptr) sam_hdr_destroy(header);
    if (file != nullptr) sam_close(file);
  }  // then `output` removes its temporary unless finish() committed it

  // One BAM record for a read and its alignment.
  Status format(const SeqRecord& read, const ReadAlignment& a, bam1_t* b) const {
    const std::size_t len = read.sequence.size();
    thread_local SamBases bases;
    sam_bases(read, a.mapped && a.primary.reverse, bases);
    const bool has_qual = !read.quality.empty();
    std::uint16_t flag = BAM_FUNMAP;
    std::int32_t tid = -1;
    hts_pos_t pos = -1;
    std::uint8_t mapq = 0;
    std::uint32_t cigar = bam_cigar_gen(len, BAM_CMATCH);
    if (a.mapped) {
      flag = a.primary.reverse ? BAM_FREVERSE : 0;
      tid = static_cast<std::int32_t>(a.primary.contig);
      pos = static_cast<hts_pos_t>(a.primary.position);
      mapq = static_cast<std::uint8_t>(mapping_quality(a, options.max_mismatches));
    }
    if (bam_set1(b, read.name.size(), read.name.c_str(), flag, tid, pos, mapq, a.mapped ? 1 : 0, &cigar, -1, -1, 0,
                 len, bases.seq.c_str(), has_qual ? bases.qual.c_str() : nullptr, 64) < 0) {
      return invalid_argument("read '" + read.name + "' cannot be stored as a BAM record (name or length too long)");
    }
    bool ok = true;
    if (a.mapped) {
      const std::int32_t nm = a.mismatches;
      const std::string md = md_tag(a.primary, len);
      const auto x0 = static_cast<std::int32_t>(std::min<std::uint64_t>(a.best_count, INT32_MAX));
      const auto x1 = static_cast<std::int32_t>(std::min<std::uint64_t>(a.second_count, INT32_MAX));
      ok = ok && bam_aux_update_int(b, "NM", nm) == 0;
      ok = ok && bam_aux_update_str(b, "MD", -1, md.c_str()) == 0;
      ok = ok && bam_aux_update_int(b, "X0", x0) == 0;
      ok = ok && bam_aux_update_int(b, "X1", x1) == 0;
      if (!a.alternatives.empty()) {
        std::string xa;
        for (const Placement& p : a.alternatives) {
          xa += contig_names[p.contig];
          xa += p.reverse ? ",-" : ",+";
          xa += std::to_string(p.position + 1) + "," + std::to_string(len) + "M," + std::to_string(p.edits.count()) + ";";
        }
        ok = ok && bam_aux_update_str(b, "XA", -1, xa.c_str()) == 0;
      }
    }
    if (!read_group_id.empty()) ok = ok && bam_aux_update_str(b, "RG", -1, read_group_id.c_str()) == 0;
    if (!ok) return {StatusCode::out_of_memory, "cannot add tags to the record of read '" + read.name + "'"};
    return {};
  }

  // The records of a gapped read: the primary, then one per supplementary hit (records[0..]).
  Status format_gapped(const SeqRecord& read, const gapped::GappedReadAlignment& a, bam1_t* const* records) const {
    if (!a.mapped) {
      // bwa mem's unmapped record (mem_reg2aln of no region) has score and sub 0, which
      // mem_aln2sam writes: AS:i:0 and XS:i:0.
      WTMAP_TRY(format(read, ReadAlignment{}, records[0]));
      const bool ok = bam_aux_update_int(records[0], "AS", 0) == 0 && bam_aux_update_int(records[0], "XS", 0) == 0;
      if (!ok) return {StatusCode::out_of_memory, "cannot add tags to the record of read '" + read.name + "'"};
      return {};
    }
    WTMAP_TRY(check_hit(a.primary, read));
    for (const gapped::GappedHit& h : a.supplementary) WTMAP_TRY(check_hit(h, read));
    for (const gapped::GappedHit& h : a.alternatives) WTMAP_TRY(check_hit(h, read));
    for (std::size_t which = 0; which <= a.supplementary.size(); ++which) {
      WTMAP_TRY(format_gapped_hit(read, a, which, records[which]));
    }
    return {};
  }

  // A hit the output can name and whose CIGAR spans the read (the mapper's contract; checked so
  // that a wrong one is an error, not a BAM record htslib cannot read back).
  Status check_hit(const gapped::GappedHit& h, const SeqRecord& read) const {
    if (h.contig >= contig_names.size()) {
      return invalid_argument("read '" + read.name + "': hit on contig " + std::to_string(h.contig) + " of " +
                              std::to_string(contig_names.size()));
    }
    Result<std::uint64_t> spanned = gapped_query_length(h.cigar);
    if (!spanned.ok()) return invalid_argument("read '" + read.name + "': " + spanned.status().message());
    if (*spanned != read.sequence.size()) {
      return invalid_argument("read '" + read.name + "' of " + std::to_string(read.sequence.size()) +
                              " bases has a hit whose CIGAR spans " + std::to_string(*spanned));
    }
    return {};
  }

  // Record `which` of a read's lines: 0 the primary, i > 0 supplementary hit i - 1, whose MAPQ is
  // at most the primary's (bwamem.c mem_reg2sam).
  static const gapped::GappedHit& line_hit(const gapped::GappedReadAlignment& a, std::size_t which) {
    return which == 0 ? a.primary : a.supplementary[which - 1];
  }
  static std::uint8_t line_mapq(const gapped::GappedReadAlignment& a, std::size_t which) {
    return which == 0 ? a.mapq : std::min(a.supplementary[which - 1].mapq, a.mapq);
  }

  // SA:Z: every other line of the read, "chr,pos,strand,CIGAR,mapq,NM;", clips soft.
  std::string sa_tag(const gapped::GappedReadAlignment& a, std::size_t which) const {
    std::string sa;
    for (std::size_t other = 0; other <= a.supplementary.size(); ++other) {
      if (other == which) continue;
      const gapped::GappedHit& h = line_hit(a, other);
      sa += contig_names[h.contig] + "," + std::to_string(h.position + 1) + (h.reverse ? ",-," : ",+,") +
            gapped::cigar_text(h.cigar) + "," + std::to_string(line_mapq(a, other)) + "," + std::to_string(h.edit_distance) + ";";
    }
    return sa;
  }

  // XA:Z: the alternatives, "chr,+pos,CIGAR,NM;" (bwamem.c mem_gen_alt).
  std::string xa_tag(const std::vector<gapped::GappedHit>& alternatives) const {
    std::string xa;
    for (const gapped::GappedHit& h : alternatives) {
      xa += contig_names[h.contig] + (h.reverse ? ",-" : ",+") + std::to_string(h.position + 1) + "," +
            gapped::cigar_text(h.cigar) + "," + std::to_string(h.edit_distance) + ";";
    }
    return xa;
  }

  Status format_gapped_hit(const SeqRecord& read, const gapped::GappedReadAlignment& a, std::size_t which, bam1_t* b) const {
    const gapped::GappedHit& h = line_hit(a, which);
    thread_local SamBases bases;
    sam_bases(read, h.reverse, bases);
    std::vector<std::uint32_t> cigar = h.cigar;
    // bwa mem hard-clips supplementary lines (unless -Y): their SEQ is only the aligned part, the
    // whole read being on the primary line.
    if (which > 0 && !options.soft_clip_supplementary && !cigar.empty()) {
      std::size_t head = 0, tail = 0;
      if (bam_cigar_op(cigar.front()) == BAM_CSOFT_CLIP) {
        head = bam_cigar_oplen(cigar.front());
        cigar.front() = bam_cigar_gen(head, BAM_CHARD_CLIP);
      }
      if (cigar.size() > 1 && bam_cigar_op(cigar.back()) == BAM_CSOFT_CLIP) {
        tail = bam_cigar_oplen(cigar.back());
        cigar.back() = bam_cigar_gen(tail, BAM_CHARD_CLIP);
      }
      for (std::string* s : {&bases.seq, &bases.qual}) {
        if (!s->empty()) s->erase(s->size() - tail).erase(0, head);
      }
    }
    const std::uint16_t flag = (h.reverse ? BAM_FREVERSE : 0) | (which > 0 ? BAM_FSUPPLEMENTARY : 0);
    if (bam_set1(b, read.name.size(), read.name.c_str(), flag, static_cast<std::int32_t>(h.contig),
                 static_cast<hts_pos_t>(h.position), line_mapq(a, which), cigar.size(), cigar.data(), -1, -1, 0,
                 bases.seq.size(), bases.seq.c_str(), bases.qual.empty() ? nullptr : bases.qual.c_str(), 64) < 0) {
      return invalid_argument("read '" + read.name + "' cannot be stored as a BAM record (name or length too long)");
    }
    // bwa mem's tag order: NM MD AS XS RG SA XA. XS on every line, 0 included (mem_aln2sam writes
    // it wherever sub >= 0): the max of its region's sub and csub (mem_reg2aln).
    const std::int32_t xs = which == 0 ? std::max(a.sub_score, a.chain_sub_score) : h.sub_score;
    bool ok = bam_aux_update_int(b, "NM", h.edit_distance) == 0;
    ok = ok && bam_aux_update_str(b, "MD", -1, h.md.c_str()) == 0;
    ok = ok && bam_aux_update_int(b, "AS", h.score) == 0;
    ok = ok && bam_aux_update_int(b, "XS", xs) == 0;
    if (!read_group_id.empty()) ok = ok && bam_aux_update_str(b, "RG", -1, read_group_id.c_str()) == 0;
    if (!a.supplementary.empty()) ok = ok && bam_aux_update_str(b, "SA", -1, sa_tag(a, which).c_str()) == 0;
    if (which == 0 && !a.alternatives.empty()) ok = ok && bam_aux_update_str(b, "XA", -1, xa_tag(a.alternatives).c_str()) == 0;
    if (!ok) return {StatusCode::out_of_memory, "cannot add tags to the record of read '" + read.name + "'"};
    return {};
  }

  std::string where() const { return options.path == "-" ? std::string("stdout") : options.path; }

  // A batch's records to the output, or to the sorter that writes them all at the end.
  Status put(const std::vector<const bam1_t*>& batch) {
    if (bam_blocks) return bam_blocks->write(batch);
    for (const bam1_t* b : batch) WTMAP_TRY(sorter ? sorter->add(b) : write_record(b));
    return {};
  }
  Status write_record(const bam1_t* b) {
    if (sam_write1(file, header, b) < 0) return {StatusCode::io_error, where() + ": write failed"};
    return {};
  }

  // CRAM: the reference (prepare_cram_reference checked it); never embedded in the file, which
  // htslib would otherwise do, silently, where it failed to load a contig; NM and MD kept as
  // written (SamWriter::open says why). hts_set_fai_filename, as samtools sets it: sam_hdr_write
  // then loads the reference after the header, matching its contigs to the @SQ lines by name
  // (CRAM_OPT_REFERENCE alone, set before the header, matches them by their order in the .fai,
  // and gave the @SQ lines the MD5s of other contigs where the FASTA's order differs).
  Status use_reference() {
    const bool ok = hts_set_fai_filename(file, options.reference.c_str()) == 0 &&
                    hts_set_opt(file, CRAM_OPT_EMBED_REF, 0) == 0 && hts_set_opt(file, CRAM_OPT_STORE_MD, 1) == 0 &&
                    hts_set_opt(file, CRAM_OPT_STORE_NM, 1) == 0;
    if (!ok) return {StatusCode::io_error, options.reference + ": htslib cannot use it as the CRAM reference"};
    return {};
  }

  // BAM: its BGZF blocks compressed on a pool of -t threads, up to kQueuedBlocks of them queued
  // (at level 1 by BamBlockWriter, on the same pool with the same queue; at the others by htslib).
  // A batch reaches htslib in one burst, some 300 blocks of 64 KiB for 50,000 reads, and with
  // htslib's own queue (two blocks a thread) the writer waited for most of a batch's compression
  // (off-CPU samples of the write thread: 77 % in hts_tpool_dispatch3) before it could pair and
  // format the next one. H200 host, E. coli, 5*10^5 pairs, -t 16: the write stage's wait 0.44 s
  // -> 0.22 s; --io-only 0.74-0.75 s against 0.79-0.88 s.
  // SAM: its lines formatted on the pool (and .sam.gz's blocks compressed), in jobs of 1000
  // records in htslib, so a batch of 50,000 reads is some 50 jobs: kQueuedSamJobs hold one, where
  // htslib's own queue (two a thread) held 32 with -t 16. Same host and reads, SAM to a file: the
  // write stage's wait 0.98 s -> 0.16 s, pairs 1.62-1.72 s against 1.91-2.22 s, single end
  // (5*10^5 reads) 1.03-1.08 s against 1.25-1.35 s.
  static constexpr int kQueuedBlocks = 512;  // 128 KiB each in htslib (the data, its compressed copy)
  static constexpr int kQueuedSamJobs = 64;  // some 1 MB each (the records and their text)
  Status work_on_threads(int queued) {
    WTMAP_TRY(threads.start(options.threads));
    htsThreadPool pool{threads.pool, queued};
    if (hts_set_opt(file, HTS_OPT_THREAD_POOL, &pool) != 0) return {StatusCode::out_of_memory, "cannot start the output's threads"};
    return {};
  }

  // Sorted output: the index beside it (CRAM's .crai; for BAM the kind by the longest contig),
  // the header's sort order, and the sorter, whose runs are named after the output's temporary.
  Status open_sorted(const std::vector<fmindex::Contig>& contigs, SamFormat format) {
    if (output->in_place()) {
      return invalid_argument(options.path + ": --sort writes an index beside the output; -o must name a regular file");
    }
    bool bai = true;
    for (const fmindex::Contig& c : contigs) bai = bai && c.length < kBaiLimit;
    const char* suffix = format == SamFormat::cram ? ".crai" : bai ? ".bai" : ".csi";
    Result<io::OutputFile> made = io::OutputFile::create(options.path + suffix, options.inputs);
    if (!made.ok()) return made.status();
    index.emplace(std::move(*made));
    if (options.threads > 1) WTMAP_TRY(threads.start(options.threads));
    SortOptions sort;
    sort.memory_bytes = options.sort_memory != 0 ? options.sort_memory : default_sort_memory();
    sort.scratch_stem = output->write_path();
    Result<CoordinateSorter> made_sorter = CoordinateSorter::create(header, sort, threads.pool);
    if (!made_sorter.ok()) return made_sorter.status();
    sorter.emplace(std::move(*made_sorter));
    index_min_shift = bai ? 0 : kCsiMinShift;  // htslib's CRAM index takes none
    return {};
  }

  // How a batch's lines follow each other: read by read, each read's primary then its
  // supplementary lines; or, for pairs (reads 2p and 2p + 1), both primaries first, then mate 1's
  // supplementary lines, then mate 2's. samtools fixmate holds a primary until its mate's primary
  // comes and writes any other line at once, so only the second order is one it leaves as it is
  // (bwa mem writes the first).
  enum class LineOrder { by_read, primaries_of_a_pair_first };

  // Formats every read's records on all threads (read i into records[first(i)..first(i + 1))),
  // then hands them to htslib in `order`.
  template <class First, class Format>
  Status format_and_write(std::size_t reads, First first, Format format_read, LineOrder order = LineOrder::by_read) {
    auto start = std::chrono::steady_clock::now();
    auto lap = [&start](double& seconds) {
      const auto now = std::chrono::steady_clock::now();
      seconds += std::chrono::duration<double>(now - start).count();
      start = now;
    };
    std::vector<Status> errors(reads);
    wtmap::detail::parallel_for_ranges(reads, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t i = begin; i < end; ++i) errors[i] = format_read(i, records.data() + first(i));
    }, 1024);
    lap(times.format);
    for (Status& e : errors) WTMAP_TRY(e);
    const std::size_t group = order == LineOrder::primaries_of_a_pair_first ? 2 : 1;
    ordered.clear();
    for (std::size_t g = 0; g < reads; g += group) {
      const std::size_t end = std::min(g + group, reads);
      for (std::size_t i = g; i < end; ++i) {
        count(records[first(i)]);
        ordered.push_back(records[first(i)]);
      }
      for (std::size_t i = g; i < end; ++i) {
        for (std::size_t r = first(i) + 1; r < first(i + 1); ++r) ordered.push_back(records[r]);
      }
    }
    WTMAP_TRY(put(ordered));
    lap(times.write);
    return {};
  }
};

SamWriter::SamWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SamWriter::SamWriter(SamWriter&&) noexcept = default;
SamWriter& SamWriter::operator=(SamWriter&&) noexcept = default;
SamWriter::~SamWriter() = default;

namespace {

// What the path says, in lower case: whether it ends .gz or .bgz, and the format named before
// that (x.sam.gz: sam); "-" for stdout has no extension: SAM.
struct PathFormat {
  bool compressed = false;
  std::string format;
};
PathFormat path_format(const std::string& given) {
  std::string path = given;
  for (char& c : path) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto ends_with = [&path](const std::string& suffix) {
    return path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  PathFormat f;
  f.compressed = ends_with(".gz") || ends_with(".bgz");
  if (f.compressed) path.erase(path.rfind('.'));
  f.format = ends_with(".bam") ? "bam" : ends_with(".cram") ? "cram" : "sam";
  return f;
}

}  // namespace

std::string requested_format(const SamOptions& options) {
  return options.format.empty() ? path_format(options.path).format : options.format;
}

Result<SamFormat> sam_format(const SamOptions& options) {
  const bool compressed = path_format(options.path).compressed;
  const std::string format = requested_format(options);
  if (format != "sam" && format != "bam" && format != "cram") {
    return invalid_argument("the output format must be SAM, BAM or CRAM, not '" + format + "'");
  }
  if (format == "cram" && options.reference.empty()) {
    return invalid_argument("CRAM output needs the reference FASTA it is encoded against: give --reference FILE (an index "
                            "does not record its FASTA; -x FILE.fa names it)");
  }
  if (format != "cram" && !options.reference.empty()) {
    return invalid_argument("--reference is the reference of CRAM output, and the output is " + std::string(format == "bam" ? "BAM" : "SAM") +
                            " (-O cram or -o FILE.cram writes CRAM)");
  }
  if (options.sort && options.path == "-") {
    return invalid_argument("--sort writes a file and its index: give -o FILE.bam or FILE.cram, not stdout");
  }
  if (format == "sam" && options.sort) {
    return invalid_argument("--sort writes BAM or CRAM: give -o FILE.bam or FILE.cram (or -O bam|cram), not SAM");
  }
  if (format == "bam") return SamFormat::bam;
  if (format == "cram") return SamFormat::cram;
  return compressed ? SamFormat::sam_bgzf : SamFormat::sam;
}

Status check_contigs_fit(SamFormat format, const std::vector<fmindex::Contig>& contigs) {
  if (format != SamFormat::bam && format != SamFormat::cram) return {};
  for (const fmindex::Contig& c : contigs) {
    if (c.length >= kBinaryContigLimit) {
      return invalid_argument(std::string(format == SamFormat::bam ? "BAM" : "CRAM") + " cannot hold contig " + c.name + " of " +
                              std::to_string(c.length) + " bases (BAM and CRAM positions end at 2^31): write SAM (-o FILE.sam or FILE.sam.gz)");
    }
  }
  return {};
}

Result<SamWriter> SamWriter::open(const SamOptions& options, const std::vector<fmindex::Contig>& contigs) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  Result<SamFormat> format = sam_format(options);
  if (!format.ok()) return format.status();
  impl->output_format = *format;
  Result<std::string> read_group = read_group_line(options.read_group);
  if (!read_group.ok()) return read_group.status();
  WTMAP_TRY(check_contigs_fit(*format, contigs));
  if (*format == SamFormat::cram) WTMAP_TRY(prepare_cram_reference(options.reference, contigs));
  // htslib's modes: "wz" writes SAM text in BGZF blocks, "wb" BAM, "wc" CRAM; a digit sets the level.
  std::string mode = *format == SamFormat::bam ? "wb" : *format == SamFormat::cram ? "wc" : *format == SamFormat::sam_bgzf ? "wz" : "w";
  if (*format != SamFormat::sam && options.compression_level >= 0) mode += std::to_string(std::min(options.compression_level, 9));
  std::string target = "-";
  if (options.path != "-") {
    Result<io::OutputFile> output = io::OutputFile::create(options.path, options.inputs);
    if (!output.ok()) return output.status();
    impl->output.emplace(std::move(*output));
    target = impl->output->write_path();
  }
  // The file is opened under the name the user gave, not the temporary's: CRAM writes that
  // name into its file definition (its first 20 bytes, as samtools writes them), so a run gives
  // the same bytes whatever temporary name it drew.
  const bool own_bam = *format == SamFormat::bam && !options.sort && options.compression_level == 1;
  if (own_bam && options.threads > 1) WTMAP_TRY(impl->threads.start(options.threads));
  hFILE* opened = hopen(target.c_str(), "w");
  if (opened == nullptr) return Status{StatusCode::io_error, impl->where() + ": cannot open for writing"};
  if (own_bam) {
    impl->bam_blocks.emplace(opened, impl->where(), impl->threads.pool, Impl::kQueuedBlocks);
  } else {
    impl->file = hts_hopen(opened, options.path.c_str(), mode.c_str());
    if (impl->file == nullptr) {
      hclose_abruptly(opened);
      return Status{StatusCode::io_error, impl->where() + ": cannot open for writing"};
    }
  }
  if (*format == SamFormat::cram) WTMAP_TRY(impl->use_reference());
  sam_hdr_t* h = sam_hdr_init();
  impl->header = h;
  bool ok = sam_hdr_add_line(h, "HD", "VN", "1.6", "SO", options.sort ? "coordinate" : "unsorted", nullptr) == 0;
  for (const fmindex::Contig& c : contigs) {
    const std::string length = std::to_string(c.length);
    ok = ok && sam_hdr_add_line(h, "SQ", "SN", c.name.c_str(), "LN", length.c_str(), nullptr) == 0;
    impl->contig_names.push_back(c.name);
  }
  if (!read_group->empty()) {
    const std::string& rg = *read_group;
    const auto id = rg.find("\tID:");
    const auto end = rg.find('\t', id + 4);
    impl->read_group_id = rg.substr(id + 4, end == std::string::npos ? std::string::npos : end - id - 4);
    ok = ok && sam_hdr_add_lines(h, rg.c_str(), rg.size()) == 0;
  }
  ok = ok && sam_hdr_add_pg(h, "wtmap", "VN", kVersion, "CL", options.command_line.c_str(), nullptr) == 0;
  if (!ok) return invalid_argument("cannot build the SAM header (bad -R line?)");
  if (own_bam) {
    WTMAP_TRY(impl->bam_blocks->write_header(h));
    return SamWriter(std::move(impl));
  }
  if (options.sort) {
    WTMAP_TRY(impl->open_sorted(contigs, *format));
    if (impl->threads.pool != nullptr) {
      htsThreadPool shared{impl->threads.pool, 0};
      hts_set_opt(impl->file, HTS_OPT_THREAD_POOL, &shared);
    }
  } else if (options.threads > 1 && *format == SamFormat::bam) {
    WTMAP_TRY(impl->work_on_threads(Impl::kQueuedBlocks));
  } else if (options.threads > 1 && *format != SamFormat::cram) {
    WTMAP_TRY(impl->work_on_threads(Impl::kQueuedSamJobs));
  } else if (options.threads > 1) {
    hts_set_threads(impl->file, static_cast<int>(options.threads));  // CRAM: its containers
  }
  // CRAM: htslib reads every contig of the reference here, for the MD5s of the @SQ lines.
  if (sam_hdr_write(impl->file, h) < 0) return Status{StatusCode::io_error, impl->where() + ": writing the header failed"};
  // The index is built as the sorted records are written (samtools sort --write-index's way);
  // htslib writes a CRAM index as it goes, and closes it with the file.
  if (options.sort && sam_idx_init(impl->file, h, impl->index_min_shift, impl->index->write_path().c_str()) < 0) {
    return Status{StatusCode::io_error, impl->index->path() + ": cannot start the index"};
  }
  return SamWriter(std::move(impl));
}

Status SamWriter::write(const std::vector<SeqRecord>& reads, const std::vector<ReadAlignment>& alignments) {
  Impl& impl = *impl_;
  WTMAP_TRY(reserve(reads.size()));
  return impl.format_and_write(
      reads.size(), [](std::size_t i) { return i; },
      [&](std::size_t i, bam1_t* const* records) { return impl.format(reads[i], alignments[i], records[0]); });
}

Status SamWriter::write(const std::vector<SeqRecord>& reads, const std::vector<gapped::GappedReadAlignment>& alignments) {
  return write_gapped(reads, alignments, nullptr);
}

Status SamWriter::write_pairs(const std::vector<SeqRecord>& reads,
                              const std::vector<gapped::GappedReadAlignment>& alignments,
                              const std::vector<MateFields>& mates) {
  if (mates.size() != reads.size()) {
    return invalid_argument("SamWriter::write_pairs: " + std::to_string(reads.size()) + " reads, " +
                            std::to_string(mates.size()) + " pair fields");
  }
  return write_gapped(reads, alignments, &mates);
}

Status SamWriter::write_gapped(const std::vector<SeqRecord>& reads,
                               const std::vector<gapped::GappedReadAlignment>& alignments,
                               const std::vector<MateFields>* mates) {
  Impl& impl = *impl_;
  if (alignments.size() != reads.size()) {
    return invalid_argument(std::to_string(alignments.size()) + " gapped alignments for " + std::to_string(reads.size()) + " reads");
  }
  // Read i's lines begin at record first[i]: its primary and its supplementary hits.
  std::vector<std::size_t> first(reads.size() + 1, 0);
  for (std::size_t i = 0; i < reads.size(); ++i) {
    first[i + 1] = first[i] + 1 + (alignments[i].mapped ? alignments[i].supplementary.size() : 0);
  }
  WTMAP_TRY(reserve(first.back()));
  return impl.format_and_write(
      reads.size(), [&first](std::size_t i) { return first[i]; },
      [&](std::size_t i, bam1_t* const* records) {
        WTMAP_TRY(impl.format_gapped(reads[i], alignments[i], records));
        if (mates == nullptr) return Status{};
        const MateFields& fields = (*mates)[i];
        WTMAP_TRY(add_mate_fields(fields, records[0]));
        for (std::size_t r = 1; r < first[i + 1] - first[i]; ++r) {
          WTMAP_TRY(add_mate_fields(supplementary_mate_fields(fields, alignments[i].supplementary[r - 1],
                                                                   impl.options.soft_clip_supplementary),
                                         records[r]));
        }
        return Status{};
      },
      mates == nullptr ? Impl::LineOrder::by_read : Impl::LineOrder::primaries_of_a_pair_first);
}

Status SamWriter::write_pairs(const std::vector<SeqRecord>& reads, const std::vector<ReadAlignment>& alignments,
                              const std::vector<MateFields>& mates) {
  if (mates.size() != reads.size() || alignments.size() != reads.size()) {
    return invalid_argument("SamWriter::write_pairs: " + std::to_string(reads.size()) + " reads, " +
                            std::to_string(alignments.size()) + " alignments, " + std::to_string(mates.size()) +
                            " pair fields");
  }
  Impl& impl = *impl_;
  WTMAP_TRY(reserve(reads.size()));
  return impl.format_and_write(
      reads.size(), [](std::size_t i) { return i; },
      [&](std::size_t i, bam1_t* const* records) {
        WTMAP_TRY(impl.format(reads[i], alignments[i], records[0]));
        return add_mate_fields(mates[i], records[0]);
      });
}

Status SamWriter::reserve(std::size_t reads) {
  std::vector<bam1_t*>& records = impl_->records;
  if (records.size() >= reads) return {};
  records.reserve(reads);
  // A placeholder of 150 unknown bases and 256 bytes of tags sizes each record's data; format()
  // sets every field of a record before it is written.
  const std::string bases(150, 'N');
  while (records.size() < reads) {
    bam1_t* b = bam_init1();
    if (b == nullptr) return {StatusCode::out_of_memory, "cannot allocate a BAM record"};
    records.push_back(b);
    if (bam_set1(b, 1, "r", BAM_FUNMAP, -1, -1, 0, 0, nullptr, -1, -1, 0, bases.size(), bases.c_str(), nullptr, 256) < 0) {
      return {StatusCode::out_of_memory, "cannot allocate a BAM record"};
    }
  }
  return {};
}

SamWriter::Times SamWriter::times() const { return impl_->times; }
const SamWriter::Counts& SamWriter::counts() const { return impl_->counts; }

Status SamWriter::finish() {
  Impl& impl = *impl_;
  if (impl.sorter) {
    if (impl.sort_note) {
      impl.sort_note("writing " + std::to_string(impl.sorter->stats().records) + " records in coordinate order to " +
                     impl.options.path);
    }
    WTMAP_TRY(impl.sorter->finish([&impl](const bam1_t* b) { return impl.write_record(b); }));
    if (sam_idx_save(impl.file) < 0) return {StatusCode::io_error, impl.index->path() + ": writing the index failed"};
  }
  const auto start = std::chrono::steady_clock::now();
  Status closed;
  if (impl.bam_blocks) {
    closed = impl.bam_blocks->close();
  } else if (sam_close(std::exchange(impl.file, nullptr)) < 0) {
    closed = {StatusCode::io_error, impl.options.path + ": closing the output failed"};
  }
  impl.times.close += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WTMAP_TRY(closed);
  if (impl.output) WTMAP_TRY(impl.output->commit());
  if (impl.index) {
    WTMAP_TRY(impl.index->commit());
    // An index of the other kind beside a BAM file belongs to the file just replaced: htslib
    // would take a stale x.bam.csi before our x.bam.bai (and IGV a stale .bai first), and
    // answer wrongly. A CRAM file has one kind.
    if (impl.output_format == SamFormat::bam) {
      const std::string other = impl.options.path + (impl.index_min_shift == 0 ? ".csi" : ".bai");
      struct stat st {};
      if (lstat(other.c_str(), &st) == 0 && S_ISREG(st.st_mode)) unlink(other.c_str());
    }
  }
  return {};
}

void SamWriter::set_sort_note(std::function<void(const std::string&)> note) { impl_->sort_note = std::move(note); }

const std::string& SamWriter::index_path() const {
  static const std::string none;
  return impl_->index ? impl_->index->path() : none;
}

std::optional<CoordinateSorter::Stats> SamWriter::sort_stats() const {
  if (!impl_->sorter) return std::nullopt;
  return impl_->sorter->stats();
}

}  // namespace wtmap::aligner
