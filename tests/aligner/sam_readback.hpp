// Test support (aligner tests): SAM/BAM files read back through htslib, the independent reader
// against which the output of wtmap align and of SamWriter is checked.
#pragma once

#include <htslib/sam.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace wtmap::altest {

struct SamRecord {
  std::string name;
  int flag = 0, tid = -1, mapq = 0;
  std::int64_t pos = -1;  // 0-based, as htslib gives it
  std::string cigar, seq, qual;
  std::optional<std::int64_t> nm, x0, x1, as, xs;
  std::optional<std::string> md, xa, rg, sa;
  // Pairs: RNEXT (as a target id), PNEXT (0-based), TLEN, MC and MQ.
  int mate_tid = -1;
  std::int64_t mate_pos = -1, tlen = 0;
  std::optional<std::string> mc;
  std::optional<std::int64_t> mq;
};

struct SamContents {
  std::string header;
  std::vector<std::pair<std::string, std::int64_t>> targets;
  std::vector<SamRecord> records;
};

inline std::optional<std::int64_t> int_tag(const bam1_t* b, const char* tag) {
  const std::uint8_t* p = bam_aux_get(b, tag);
  return p == nullptr ? std::nullopt : std::optional<std::int64_t>(bam_aux2i(p));
}

inline std::optional<std::string> string_tag(const bam1_t* b, const char* tag) {
  const std::uint8_t* p = bam_aux_get(b, tag);
  return p == nullptr ? std::nullopt : std::optional<std::string>(bam_aux2Z(p));
}

inline SamContents read_alignments(const std::string& path, const std::string& cram_reference = "") {
  std::unique_ptr<samFile, int (*)(samFile*)> file(sam_open(path.c_str(), "r"), [](samFile* f) { return sam_close(f); });
  if (!file) throw std::runtime_error("sam_open failed for " + path);
  if (!cram_reference.empty() && hts_set_fai_filename(file.get(), cram_reference.c_str()) != 0) {
    throw std::runtime_error("cannot read " + path + " against " + cram_reference);
  }
  std::unique_ptr<sam_hdr_t, void (*)(sam_hdr_t*)> header(sam_hdr_read(file.get()), sam_hdr_destroy);
  if (!header) throw std::runtime_error("sam_hdr_read failed for " + path);
  SamContents s;
  s.header = sam_hdr_str(header.get());
  for (int t = 0; t < sam_hdr_nref(header.get()); ++t) {
    s.targets.push_back({sam_hdr_tid2name(header.get(), t), sam_hdr_tid2len(header.get(), t)});
  }
  std::unique_ptr<bam1_t, void (*)(bam1_t*)> b(bam_init1(), bam_destroy1);
  int got;
  while ((got = sam_read1(file.get(), header.get(), b.get())) >= 0) {
    SamRecord r;
    r.name = bam_get_qname(b.get());
    r.flag = b->core.flag;
    r.tid = b->core.tid;
    r.pos = b->core.pos;
    r.mapq = b->core.qual;
    const std::uint32_t* cigar = bam_get_cigar(b.get());
    for (std::uint32_t i = 0; i < b->core.n_cigar; ++i) r.cigar += std::to_string(bam_cigar_oplen(cigar[i])) + bam_cigar_opchr(cigar[i]);
    const std::uint8_t* seq = bam_get_seq(b.get());
    const std::uint8_t* qual = bam_get_qual(b.get());
    for (int i = 0; i < b->core.l_qseq; ++i) r.seq += seq_nt16_str[bam_seqi(seq, i)];
    if (b->core.l_qseq > 0 && qual[0] != 0xff) {
      for (int i = 0; i < b->core.l_qseq; ++i) r.qual += static_cast<char>(qual[i] + 33);
    }
    r.nm = int_tag(b.get(), "NM");
    r.x0 = int_tag(b.get(), "X0");
    r.x1 = int_tag(b.get(), "X1");
    r.md = string_tag(b.get(), "MD");
    r.xa = string_tag(b.get(), "XA");
    r.rg = string_tag(b.get(), "RG");
    r.as = int_tag(b.get(), "AS");
    r.xs = int_tag(b.get(), "XS");
    r.sa = string_tag(b.get(), "SA");
    r.mate_tid = b->core.mtid;
    r.mate_pos = b->core.mpos;
    r.tlen = b->core.isize;
    r.mc = string_tag(b.get(), "MC");
    r.mq = int_tag(b.get(), "MQ");
    s.records.push_back(std::move(r));
  }
  if (got < -1) throw std::runtime_error("sam_read1 failed in " + path + " after " + std::to_string(s.records.size()) + " records");
  return s;
}

}  // namespace wtmap::altest
