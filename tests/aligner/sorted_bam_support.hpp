// Test support for coordinate-sorted output (--sort): samtools sort's order written out
// independently of bam_sorter.hpp, BAM and CRAM records as SAM text, and region queries through
// an index against a scan of every record -- all through htslib. A CRAM file is read against the
// reference given (so that htslib looks nowhere else for it, not on the network).
#pragma once

#include <htslib/hts.h>
#include <htslib/sam.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace wtmap::altest {

// samtools sort's key (bam_sort.c, bam1_cmp_core): tid with -1 after every contig, POS + 1, the
// reverse flag. Ties are broken by the caller (input order).
inline std::tuple<std::int64_t, std::int64_t, int> samtools_key(const bam1_t* b) {
  const std::int64_t tid = b->core.tid < 0 ? INT64_MAX : b->core.tid;
  return {tid, b->core.pos + 1, (b->core.flag & BAM_FREVERSE) != 0 ? 1 : 0};
}

struct SamFileDeleter {
  void operator()(samFile* f) const { sam_close(f); }
};
struct HeaderDeleter {
  void operator()(sam_hdr_t* h) const { sam_hdr_destroy(h); }
};
struct RecordDeleter {
  void operator()(bam1_t* b) const { bam_destroy1(b); }
};
struct IndexDeleter {
  void operator()(hts_idx_t* i) const { hts_idx_destroy(i); }
};
using RecordPtr = std::unique_ptr<bam1_t, RecordDeleter>;

// A BAM file's header and records, each record kept whole.
struct BamContents {
  std::string header;
  std::vector<RecordPtr> records;
  std::vector<std::string> lines;  // each record as SAM text
};

// Opens `path` for reading; a CRAM file against `reference` where given.
inline std::unique_ptr<samFile, SamFileDeleter> open_alignments(const std::string& path, const std::string& reference) {
  std::unique_ptr<samFile, SamFileDeleter> file(sam_open(path.c_str(), "r"));
  if (!file) throw std::runtime_error("cannot open " + path);
  if (!reference.empty() && hts_set_fai_filename(file.get(), reference.c_str()) != 0) {
    throw std::runtime_error("cannot read " + path + " against " + reference);
  }
  return file;
}

inline BamContents read_bam(const std::string& path, const std::string& reference = "") {
  const std::unique_ptr<samFile, SamFileDeleter> file = open_alignments(path, reference);
  std::unique_ptr<sam_hdr_t, HeaderDeleter> header(sam_hdr_read(file.get()));
  if (!header) throw std::runtime_error("no header in " + path);
  BamContents c;
  c.header = sam_hdr_str(header.get());
  kstring_t text = KS_INITIALIZE;
  while (true) {
    RecordPtr b(bam_init1());
    const int got = sam_read1(file.get(), header.get(), b.get());
    if (got == -1) break;
    if (got < 0) throw std::runtime_error("cannot read a record of " + path);
    if (sam_format1(header.get(), b.get(), &text) < 0) throw std::runtime_error("cannot format a record of " + path);
    c.lines.emplace_back(ks_str(&text), ks_len(&text));
    c.records.push_back(std::move(b));
  }
  ks_free(&text);
  return c;
}

// The SAM text of the records `index_path` returns for tid:[begin, end) of `bam_path` (an empty
// index_path: the index htslib finds beside it); a CRAM file read against `reference`.
inline std::vector<std::string> query_lines(const std::string& bam_path, const std::string& index_path, int tid,
                                            std::int64_t begin, std::int64_t end, const std::string& reference = "") {
  const std::unique_ptr<samFile, SamFileDeleter> file = open_alignments(bam_path, reference);
  std::unique_ptr<sam_hdr_t, HeaderDeleter> header(sam_hdr_read(file.get()));
  std::unique_ptr<hts_idx_t, IndexDeleter> index(index_path.empty() ? sam_index_load(file.get(), bam_path.c_str())
                                                                       : sam_index_load2(file.get(), bam_path.c_str(), index_path.c_str()));
  if (!header || !index) throw std::runtime_error("cannot load " + index_path);
  std::unique_ptr<hts_itr_t, void (*)(hts_itr_t*)> it(sam_itr_queryi(index.get(), tid, begin, end), hts_itr_destroy);
  if (!it) throw std::runtime_error("cannot query " + index_path);
  std::vector<std::string> lines;
  RecordPtr b(bam_init1());
  kstring_t text = KS_INITIALIZE;
  int got;
  while ((got = sam_itr_next(file.get(), it.get(), b.get())) >= 0) {
    if (sam_format1(header.get(), b.get(), &text) < 0) throw std::runtime_error("cannot format a record");
    lines.emplace_back(ks_str(&text), ks_len(&text));
  }
  ks_free(&text);
  if (got < -1) throw std::runtime_error("query of " + index_path + " failed");
  return lines;
}

// The records of `c` that overlap tid:[begin, end), by a scan (an unmapped record covers its POS).
inline std::vector<std::string> scanned_lines(const BamContents& c, int tid, std::int64_t begin, std::int64_t end) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < c.records.size(); ++i) {
    const bam1_t* b = c.records[i].get();
    if (b->core.tid == tid && b->core.pos < end && bam_endpos(b) > begin) lines.push_back(c.lines[i]);
  }
  return lines;
}

}  // namespace wtmap::altest
