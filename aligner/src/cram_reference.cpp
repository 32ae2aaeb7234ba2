#include "wtmap/aligner/cram_reference.hpp"

#include <htslib/bgzf.h>
#include <htslib/faidx.h>
#include <htslib/hts.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "wtmap/io/bgzf_input.hpp"
#include "wtmap/io/input_file.hpp"
#include "wtmap/io/output_file.hpp"

namespace wtmap::aligner {
namespace {

struct FaiFree {
  void operator()(faidx_t* fai) const { fai_destroy(fai); }
};
using FaiPtr = std::unique_ptr<faidx_t, FaiFree>;

// A file's modification time, or none where it does not exist.
std::optional<timespec> modified(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return st.st_mtim;
}

bool older(const timespec& a, const timespec& b) { return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec; }

// What the reference file is compressed with: htslib's no_compression, gzip or bgzf; a bgzip
// file cut short (no end-of-file block) is refused.
Result<htsCompression> compression_of(const std::string& fasta) {
  BGZF* file = bgzf_open(fasta.c_str(), "r");
  if (file == nullptr) return Status{StatusCode::io_error, fasta + ": cannot open for reading (" + std::strerror(errno) + ")"};
  const auto kind = static_cast<htsCompression>(bgzf_compression(file));
  const Status marker = io::check_bgzf_marker(file, fasta);
  bgzf_close(file);
  if (!marker.ok()) return marker;
  return kind;
}

// Every contig of the index in the FASTA's index, with the same length.
Status compare_contigs(const faidx_t* fai, const std::string& fasta, const std::vector<fmindex::Contig>& contigs) {
  const std::string mismatch = fasta + " does not match the index (give the FASTA the index was built from): ";
  for (const fmindex::Contig& c : contigs) {
    if (faidx_has_seq(fai, c.name.c_str()) == 0) return invalid_argument(mismatch + "it has no contig " + c.name);
    // faidx_seq_len is an int in htslib 1.16: a length past it reads negative, and differs anyway
    // (check_contigs_fit kept longer contigs from CRAM).
    const int length = faidx_seq_len(fai, c.name.c_str());
    if (length < 0 || static_cast<std::uint64_t>(length) != c.length) {
      return invalid_argument(mismatch + "contig " + c.name + " has " + (length < 0 ? std::string("more than 2^31") : std::to_string(length)) +
                              " bases there, " + std::to_string(c.length) + " in the index");
    }
  }
  return {};
}

// Builds the FASTA's .fai (and a bgzip FASTA's .gzi) into temporaries beside it, checks the
// contigs against them, then renames those that were missing into place.
Status build_missing_indexes(const std::string& fasta, bool bgzf, bool fai_missing, bool gzi_missing,
                             const std::vector<fmindex::Contig>& contigs) {
  const std::string fai_path = fasta + ".fai", gzi_path = fasta + ".gzi";
  const std::string missing = fai_missing ? fai_path : gzi_path;
  auto make = [&](const std::string& path) -> Result<io::OutputFile> {
    Result<io::OutputFile> made = io::OutputFile::create(path, {fasta});
    if (!made.ok()) {
      return Status{made.status().code(), fasta + " has no " + missing + " and it cannot be made beside it (" + made.status().message() +
                                              "); copy or link the FASTA into a folder you can write"};
    }
    return made;
  };
  Result<io::OutputFile> fai = make(fai_path);
  if (!fai.ok()) return fai.status();
  std::optional<io::OutputFile> gzi;
  if (bgzf) {
    Result<io::OutputFile> made = make(gzi_path);
    if (!made.ok()) return made.status();
    gzi.emplace(std::move(*made));
  }
  const char* gzi_write = gzi ? gzi->write_path().c_str() : nullptr;
  if (fai_build3(fasta.c_str(), fai->write_path().c_str(), gzi_write) != 0) {
    return Status{StatusCode::io_error, fasta + ": cannot index it as `samtools faidx` would (is it a FASTA file?)"};
  }
  const FaiPtr built(fai_load3(fasta.c_str(), fai->write_path().c_str(), gzi_write, 0));
  if (!built) return Status{StatusCode::io_error, fasta + ": cannot read back the .fai just made of it"};
  WTMAP_TRY(compare_contigs(built.get(), fasta, contigs));
  if (fai_missing) WTMAP_TRY(fai->commit());
  if (gzi && gzi_missing) WTMAP_TRY(gzi->commit());
  return {};
}

}  // namespace

Status prepare_cram_reference(const std::string& fasta, const std::vector<fmindex::Contig>& contigs) {
  if (fasta.empty() || fasta == "-") return invalid_argument("the CRAM reference must be a FASTA file, not standard input");
  WTMAP_TRY(io::check_input_path(fasta));
  Result<htsCompression> compression = compression_of(fasta);
  if (!compression.ok()) return compression.status();
  if (*compression == gzip) {
    return invalid_argument(fasta + " is gzip-compressed, which htslib cannot read at random places: give CRAM the FASTA "
                                    "uncompressed (gunzip) or compressed with bgzip");
  }
  const bool bgzf = *compression == htsCompression::bgzf;
  const std::string fai_path = fasta + ".fai", gzi_path = fasta + ".gzi";
  const std::optional<timespec> fasta_time = modified(fasta), fai_time = modified(fai_path);
  const std::optional<timespec> gzi_time = bgzf ? modified(gzi_path) : std::nullopt;
  for (const auto& [path, time] : {std::pair{fai_path, fai_time}, std::pair{gzi_path, gzi_time}}) {
    if (time && fasta_time && older(*time, *fasta_time)) {
      return invalid_argument(path + " is older than " + fasta + ", so it may describe another file: remove it or rebuild it "
                                     "(samtools faidx " + fasta + ")");
    }
  }
  if (!fai_time || (bgzf && !gzi_time)) return build_missing_indexes(fasta, bgzf, !fai_time, bgzf && !gzi_time, contigs);
  const FaiPtr fai(fai_load3(fasta.c_str(), nullptr, nullptr, 0));
  if (!fai) return Status{StatusCode::io_error, fai_path + ": cannot read it as a FASTA index; rebuild it (samtools faidx " + fasta + ")"};
  return compare_contigs(fai.get(), fasta, contigs);
}

}  // namespace wtmap::aligner
