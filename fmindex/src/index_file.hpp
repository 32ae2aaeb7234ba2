// wtmap fmindex (internal): the index file that FmIndex and GeneralFmIndex share -- sections
// with a tag, a 64-bit payload size and a CRC-32 each; the header (magic, format version, the
// alphabet from version 2 on, build parameters); the contig and fragment tables; the sampled
// suffix array; and the write to a temporary name renamed when complete.
//
// Section layout: 4-byte tag, u64 payload size, payload, u32 CRC-32 of the payload. Loading
// checks every section's tag, length and checksum and names what is wrong and where.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <istream>
#include <new>
#include <sstream>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include <zlib.h>

#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/alphabet.hpp"
#include "wtmap/fmindex/reference.hpp"
#include "wtmap/fmindex/sampled_suffix_array.hpp"

namespace wtmap::fmindex::file {

// CRC-32 of `size` bytes, in pieces on all CPU threads joined with crc32_combine: zlib's CRC
// runs at about 0.5 GB/s on one core, which made it most of the load time of a gigabase index.
std::uint32_t parallel_crc(const char* data, std::uint64_t size);

template <class T>
void put(std::string& s, const T& v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }
template <class T>
void put_array(std::string& s, const std::vector<T>& v) {
  put<std::uint64_t>(s, v.size());
  s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}
// The same counted array written to a stream (a streamed section's payload).
template <class T>
Status write_array(std::ostream& out, const std::vector<T>& v) {
  const std::uint64_t count = v.size();
  out.write(reinterpret_cast<const char*>(&count), 8);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  return out ? Status{} : Status{StatusCode::io_error, "write failed"};
}

// Reads a payload field by field, failing (never crashing) on a short payload.
class PayloadReader {
 public:
  PayloadReader(const std::string& s, std::string what) : s_(s), what_(std::move(what)) {}
  template <class T>
  Status get(T& v) {
    if (pos_ + sizeof v > s_.size()) return corrupt_data(what_ + " section is too short");
    std::memcpy(&v, s_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return {};
  }
  template <class T>
  Status get_array(std::vector<T>& v, std::uint64_t max_items) {
    std::uint64_t n = 0;
    WTMAP_TRY(get(n));
    if (n > max_items || n * sizeof(T) > s_.size() - pos_) return corrupt_data(what_ + " section has an impossible length");
    v.resize(n);
    if (n > 0) std::memcpy(v.data(), s_.data() + pos_, n * sizeof(T));  // an empty vector's data() may be null
    pos_ += n * sizeof(T);
    return {};
  }
  Status get_string(std::string& v) {
    std::uint32_t n = 0;
    WTMAP_TRY(get(n));
    if (n > s_.size() - pos_) return corrupt_data(what_ + " section has an impossible string length");
    v.assign(s_.data() + pos_, n);
    pos_ += n;
    return {};
  }
  Status finish() const { return pos_ == s_.size() ? Status{} : corrupt_data(what_ + " section has trailing bytes"); }

 private:
  const std::string& s_;
  std::string what_;
  std::size_t pos_ = 0;
};

// A section's tag and payload size, the size bounded by what is left of the file.
Result<std::uint64_t> section_header(std::istream& in, const char (&tag)[5], const std::string& path);

// The payload of one section as a stream of its own: at most `size` bytes of the file, their
// CRC-32 taken on the way (large reads go straight into the reader's memory and are summed in
// parallel). The large sections (tree, sampled rows, SA samples) are parsed from it directly,
// not from a zero-filled copy of the section: one pass less over memory the size of the index.
class SectionBuffer : public std::streambuf {
 public:
  SectionBuffer(std::istream& in, std::uint64_t size) : in_(in), left_(size) {}
  std::uint32_t crc() const { return static_cast<std::uint32_t>(crc_); }
  bool all_consumed() const { return left_ == 0 && gptr() == egptr(); }
  // Whether a read stopped because memory or a thread for the checksum could not be had (the
  // stream then looks cut short, which the file is not).
  bool out_of_resources() const { return out_of_resources_; }
  // Reads and sums the rest of the payload after a parse gave up; false if the file ends first.
  bool drain();

 protected:
  int_type underflow() override;
  std::streamsize xsgetn(char* dst, std::streamsize count) override;

 private:
  std::streamsize fill(char* dst, std::uint64_t n);

  std::istream& in_;
  std::uint64_t left_;
  uLong crc_ = crc32(0L, Z_NULL, 0);
  bool out_of_resources_ = false;
  char buffer_[1 << 16];
};

// Parses one section with parse(std::istream& payload, size) -> Result<T>, then checks that it
// used the whole payload and that the payload's checksum is the stored one. A parse error caused
// by a corrupt byte is reported as the parser's error (the checksum would have caught it too).
template <class Parse>
auto read_streamed_section(std::istream& in, const char (&tag)[5], const std::string& path, Parse&& parse)
    -> decltype(parse(in, std::uint64_t{0})) {
  auto size = section_header(in, tag, path);
  if (!size.ok()) return size.status();
  SectionBuffer buffer(in, *size);
  std::istream payload(&buffer);
  const std::string where = " the " + std::string(tag) + " section";
  const Status out_of_memory{StatusCode::out_of_memory, path + ": not enough memory to load" + where};
  auto parse_payload = [&]() -> decltype(parse(in, std::uint64_t{0})) {
    try {
      return parse(payload, *size);
    } catch (const std::bad_alloc&) {
      return out_of_memory;
    }
  };
  auto parsed = parse_payload();
  if (buffer.out_of_resources()) return out_of_memory;
  if (!parsed.ok() && parsed.status().code() == StatusCode::out_of_memory) {
    return parsed.status().message().rfind(path, 0) == 0 ? parsed.status()
                                                           : Status{StatusCode::out_of_memory, path + ": " + parsed.status().message()};
  }
  // A damaged byte can make any field look wrong (a format version "newer than this build"), so
  // the checksum of a payload the parser rejected is taken first: a mismatch says corruption.
  if (!parsed.ok() && !buffer.drain()) {
    if (buffer.out_of_resources()) return out_of_memory;
    return corrupt_data(path + ": truncated index file (in" + where + ")");
  }
  std::uint32_t stored = 0;
  in.read(reinterpret_cast<char*>(&stored), 4);
  if (!in) return corrupt_data(path + ": truncated index file (in" + where + ")");
  if (buffer.out_of_resources()) return out_of_memory;
  if (buffer.crc() != stored) return corrupt_data(path + ": corrupt index file (checksum mismatch in" + where + ")");
  if (!parsed.ok()) return Status{parsed.status().code(), path + ": the " + std::string(tag) + " section: " + parsed.status().message()};
  if (!buffer.all_consumed()) return corrupt_data(path + ": corrupt index file (" + where.substr(1) + " is longer than its content)");
  return parsed;
}

// A small section's whole payload, checked like any other.
Result<std::string> read_section(std::istream& in, const char (&tag)[5], const std::string& path);

// A counted array of 64-bit values from a section's payload of `size` bytes: the count is
// checked against the payload and `max_items` before anything is allocated.
Result<std::vector<std::uint64_t>> read_u64_array(std::istream& payload, std::uint64_t size, std::uint64_t max_items,
                                                  const char* what);

// ---- the parts of an index file ---------------------------------------------------------------

// A section's payload: the bytes, or (for the large ones: a tree, the packed text, the samples)
// written straight to the file by `stream`, never held twice.
struct Section {
  const char* tag;  // four characters
  std::string payload;
  std::function<Status(std::ostream&)> stream = nullptr;  // if set, the payload (payload unused)
};

// Writes the sections to a temporary name beside `path` and renames it to `path` when complete:
// a crash or a full disk never leaves a half index under the final name, nor the temporary file.
Status write_index_file(const std::string& path, const std::vector<Section>& sections);

// The HEAD section: magic "WTMAPIDX", version, then version 1 (DNA): u32 sample rate, u64 m, u64
// n; version 2: u32 alphabet (protein or byte), u32 sample rate, u64 m, u64 n.
struct IndexHeader {
  std::uint32_t version = 0;
  Alphabet alphabet = Alphabet::dna;
  std::uint32_t sample_rate = 0;
  std::uint64_t forward_length = 0;  // m
  std::uint64_t rows = 0;            // n
};
std::string header_payload(const IndexHeader& header);
// Opens `path` into `in` and reads its header: rejects files that are no wtmap index, versions
// newer than this build reads (saying so), and impossible alphabet fields.
Result<IndexHeader> open_index(std::ifstream& in, const std::string& path);

// CTGS and FRAG. Contigs need distinct names the indexer would accept (is_valid_contig_name). Fragments are checked against the contigs and the forward
// length m: non-empty, inside their contigs, the first at 0, each one separator after the
// previous one, the last ending at m (so every to_reference and text lookup stays in bounds).
std::string contigs_payload(const std::vector<Contig>& contigs);
std::string fragments_payload(const std::vector<Fragment>& fragments);
Result<std::vector<Contig>> read_contigs(std::istream& in, const std::string& path);
Result<std::vector<Fragment>> read_fragments(std::istream& in, const std::string& path, const std::vector<Contig>& contigs,
                                             std::uint64_t m);

// SMPB (the marks, a RankSelectBitVector) and SMPA (the samples, a counted u64 array), for a
// text of n symbols sampled every `sample_rate` positions and at `after_separator` (ascending:
// the positions that follow a separator or, as 0, the terminator). The samples must be exactly
// those positions (check_samples), their count the marks' ones (SampledSuffixArray::create).
Status write_samples(const SampledSuffixArray& sa, std::ostream& out);  // SMPA's payload
Status check_samples(const std::vector<std::uint64_t>& samples, std::uint64_t n, std::uint32_t sample_rate,
                     const std::vector<std::uint64_t>& after_separator);
Result<SampledSuffixArray> read_sampled_suffix_array(std::istream& in, const std::string& path, std::uint64_t n,
                                                     std::uint32_t sample_rate,
                                                     const std::vector<std::uint64_t>& after_separator,
                                                     Backend backend);

// A whole index file, in the order both index kinds share: HEAD, CTGS, FRAG, then the kind's own
// sections (`own`, in order), BWTW (the wavelet tree's save()) and the sampled suffix array.
template <class Tree>
Status write_index(const std::string& path, const IndexHeader& header, const std::vector<Contig>& contigs,
                   const std::vector<Fragment>& fragments, std::vector<Section> own, const Tree& bwt,
                   const SampledSuffixArray& sa) {
  std::vector<Section> sections = {
      {"HEAD", header_payload(header)}, {"CTGS", contigs_payload(contigs)}, {"FRAG", fragments_payload(fragments)}};
  for (Section& s : own) sections.push_back(std::move(s));
  sections.push_back({"BWTW", {}, [&bwt](std::ostream& out) { return bwt.save(out); }});
  sections.push_back({"SMPB", {}, [&sa](std::ostream& out) { return sa.marks().save(out); }});
  sections.push_back({"SMPA", {}, [&sa](std::ostream& out) { return write_samples(sa, out); }});
  return write_index_file(path, sections);
}

// The end of the file must follow the last section.
Status expect_end(std::istream& in, const std::string& path);

}  // namespace wtmap::fmindex::file
