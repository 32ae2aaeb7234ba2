#include "index_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <new>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/fmindex/fm_index_base.hpp"
#include "wtmap/io/output_file.hpp"

namespace wtmap::fmindex::file {
namespace {

constexpr char kMagic[8] = {'W', 'T', 'M', 'A', 'P', 'I', 'D', 'X'};

}  // namespace

std::uint32_t parallel_crc(const char* data, std::uint64_t size) {
  constexpr std::uint64_t kPiece = std::uint64_t{16} << 20;
  const std::uint64_t pieces = (size + kPiece - 1) / kPiece;
  std::vector<uLong> crcs(pieces);
  wtmap::detail::parallel_for_ranges(pieces, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t p = begin; p < end; ++p) {
      const std::uint64_t first = p * kPiece, length = std::min<std::uint64_t>(kPiece, size - first);
      crcs[p] = crc32_z(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data + first), length);
    }
  }, 1);
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::uint64_t p = 0; p < pieces; ++p) {
    crc = crc32_combine64(crc, crcs[p], static_cast<z_off64_t>(std::min<std::uint64_t>(kPiece, size - p * kPiece)));
  }
  return static_cast<std::uint32_t>(crc);
}

Result<std::uint64_t> section_header(std::istream& in, const char (&tag)[5], const std::string& path) {
  char got[4];
  std::uint64_t size = 0;
  in.read(got, 4);
  in.read(reinterpret_cast<char*>(&size), 8);
  if (!in) return corrupt_data(path + ": truncated index file (missing the " + tag + " section)");
  if (std::memcmp(got, tag, 4) != 0) {
    return corrupt_data(path + ": corrupt index file (expected the " + std::string(tag) + " section)");
  }
  const auto here = in.tellg();
  in.seekg(0, std::ios::end);
  const auto end = in.tellg();
  in.seekg(here);
  const auto left = static_cast<std::uint64_t>(end - here);
  if (left < 4 || size > left - 4) {  // not size + 4 > left: a size near 2^64 would wrap past the check
    return corrupt_data(path + ": truncated index file (the " + std::string(tag) + " section is cut short)");
  }
  return size;
}

SectionBuffer::int_type SectionBuffer::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  const std::streamsize got = fill(buffer_, std::min<std::uint64_t>(sizeof buffer_, left_));
  if (got <= 0) return traits_type::eof();
  setg(buffer_, buffer_, buffer_ + got);
  return traits_type::to_int_type(buffer_[0]);
}

std::streamsize SectionBuffer::xsgetn(char* dst, std::streamsize count) {
  const std::streamsize buffered = std::min<std::streamsize>(count, egptr() - gptr());
  if (buffered > 0) {
    std::memcpy(dst, gptr(), static_cast<std::size_t>(buffered));
    gbump(static_cast<int>(buffered));
  }
  return buffered + fill(dst + buffered, std::min<std::uint64_t>(static_cast<std::uint64_t>(count - buffered), left_));
}

std::streamsize SectionBuffer::fill(char* dst, std::uint64_t n) {
  if (n == 0 || out_of_resources_) return 0;
  in_.read(dst, static_cast<std::streamsize>(n));
  const std::streamsize got = in_.gcount();
  try {  // an exception here would reach the istream, which reports it as an end of data
    crc_ = crc32_combine64(crc_, parallel_crc(dst, static_cast<std::uint64_t>(got)), got);
  } catch (const std::exception&) {  // std::bad_alloc, or std::system_error from a thread
    out_of_resources_ = true;
    return 0;
  }
  left_ -= static_cast<std::uint64_t>(got);
  return got;
}

bool SectionBuffer::drain() {
  setg(buffer_, buffer_, buffer_);
  while (left_ > 0) {
    if (fill(buffer_, std::min<std::uint64_t>(sizeof buffer_, left_)) <= 0) return false;
  }
  return true;
}

Result<std::string> read_section(std::istream& in, const char (&tag)[5], const std::string& path) {
  return read_streamed_section(in, tag, path, [&](std::istream& payload, std::uint64_t size) -> Result<std::string> {
    std::string bytes;
    try {
      bytes.resize(size);
    } catch (const std::bad_alloc&) {
      return Status{StatusCode::out_of_memory, "not enough host memory for the " + std::string(tag) + " section (" +
                                                   std::to_string(size) + " bytes)"};
    }
    payload.read(bytes.data(), static_cast<std::streamsize>(size));
    if (static_cast<std::uint64_t>(payload.gcount()) != size) {
      return corrupt_data("truncated index file (in the " + std::string(tag) + " section)");
    }
    return bytes;
  });
}

Result<std::vector<std::uint64_t>> read_u64_array(std::istream& payload, std::uint64_t size, std::uint64_t max_items,
                                                  const char* what) {
  std::uint64_t count = 0;
  payload.read(reinterpret_cast<char*>(&count), 8);
  if (payload.gcount() != 8 || count > max_items || count > (size - 8) / 8) {
    return corrupt_data(std::string(what) + " section has an impossible length");
  }
  std::vector<std::uint64_t> values(count);
  payload.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * 8));
  if (static_cast<std::uint64_t>(payload.gcount()) != count * 8) return corrupt_data(std::string(what) + " section is cut short");
  return values;
}

namespace {

// Passes a streamed section's payload on to the file's buffer, checksumming and counting it: in
// 1 MiB pieces, or a large write (a tree's or an array's bytes) at once, where parallel_crc runs
// on every thread.
class ChecksumBuffer : public std::streambuf {
 public:
  explicit ChecksumBuffer(std::streambuf& to) : to_(to), buffer_(std::size_t{1} << 20) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  std::uint64_t bytes() const { return bytes_; }
  std::uint32_t crc() const { return static_cast<std::uint32_t>(crc_); }
  bool failed() const { return failed_; }

 protected:
  int_type overflow(int_type c) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n < static_cast<std::streamsize>(buffer_.size())) return std::streambuf::xsputn(s, n);
    return flush_buffer() && pass(s, n) ? n : 0;
  }
  int sync() override { return flush_buffer() ? 0 : -1; }

 private:
  bool flush_buffer() {
    const bool ok = pass(pbase(), pptr() - pbase());
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return ok;
  }
  bool pass(const char* s, std::streamsize n) {
    if (failed_ || n == 0) return !failed_;
    try {  // an exception here would reach the ostream as a failed write
      crc_ = crc32_combine64(crc_, parallel_crc(s, static_cast<std::uint64_t>(n)), n);
    } catch (const std::exception&) {  // std::bad_alloc, or std::system_error from a thread
      failed_ = true;
      return false;
    }
    bytes_ += static_cast<std::uint64_t>(n);
    failed_ = to_.sputn(s, n) != n;
    return !failed_;
  }

  std::streambuf& to_;
  std::vector<char> buffer_;
  uLong crc_ = crc32(0L, Z_NULL, 0);
  std::uint64_t bytes_ = 0;
  bool failed_ = false;
};

// A section as the file holds it: tag, u64 payload size, payload, CRC-32 of the payload. The
// payload passes through a ChecksumBuffer, the size written as zero first and patched in once
// known (a streamed payload's is known only then).
Status write_section(std::ofstream& out, const Section& s, const std::string& path) {
  const auto io_error = [&] { return Status{StatusCode::io_error, path + ": write failed (disk full?)"}; };
  out.write(s.tag, 4);
  const std::streamoff size_at = out.tellp();
  std::uint64_t size = 0;
  out.write(reinterpret_cast<const char*>(&size), 8);
  if (!out) return io_error();
  ChecksumBuffer checksummed(*out.rdbuf());
  std::ostream payload(&checksummed);
  if (s.stream) {
    WTMAP_TRY(s.stream(payload));
  } else {
    payload.write(s.payload.data(), static_cast<std::streamsize>(s.payload.size()));
  }
  payload.flush();
  if (!payload || checksummed.failed()) return io_error();
  size = checksummed.bytes();
  const std::uint32_t crc = checksummed.crc();
  out.seekp(size_at);
  out.write(reinterpret_cast<const char*>(&size), 8);
  out.seekp(0, std::ios::end);
  out.write(reinterpret_cast<const char*>(&crc), 4);
  return out ? Status{} : io_error();
}

}  // namespace

Status write_index_file(const std::string& path, const std::vector<Section>& sections) {
  // A temporary beside the file, renamed over it when complete (io/output_file.hpp).
  Result<io::OutputFile> file = io::OutputFile::create(path);
  if (!file.ok()) return file.status();
  {
    std::ofstream out(file->write_path(), std::ios::binary | std::ios::trunc);
    if (!out) return {StatusCode::io_error, path + ": cannot open for writing"};
    for (const Section& s : sections) WTMAP_TRY(write_section(out, s, path));
    out.close();
    if (!out) return {StatusCode::io_error, path + ": write failed (disk full?)"};
  }
  return file->commit();
}

std::string header_payload(const IndexHeader& h) {
  std::string s;
  s.append(kMagic, 8);
  put(s, h.version);
  if (h.version >= kGeneralIndexVersion) put(s, static_cast<std::uint32_t>(h.alphabet));
  put(s, h.sample_rate);
  put(s, h.forward_length);
  put(s, h.rows);
  return s;
}

Result<IndexHeader> open_index(std::ifstream& in, const std::string& path) {
  errno = 0;
  in.open(path, std::ios::binary);
  if (!in) {  // the system's reason; a buffer that could not be allocated is no I/O error
    const int error = errno;
    if (error == ENOMEM) return Status{StatusCode::out_of_memory, path + ": not enough memory to open the index file"};
    return Status{StatusCode::io_error, path + ": cannot open the index file" + (error != 0 ? " (" + std::string(std::strerror(error)) + ")" : "")};
  }
  char magic[8] = {};
  in.read(magic, 8);
  const bool whole = in.gcount() == 8;
  in.clear();
  in.seekg(0);
  if (!whole || std::memcmp(magic + 0, "HEAD", 4) != 0) return corrupt_data(path + ": not a wtmap index file");
  auto payload = read_section(in, "HEAD", path);
  if (!payload.ok()) return payload.status();
  PayloadReader r(*payload, path + ": header");
  char file_magic[8];
  for (char& c : file_magic) WTMAP_TRY(r.get(c));
  if (std::memcmp(file_magic, kMagic, 8) != 0) return corrupt_data(path + ": not a wtmap index file");
  IndexHeader h;
  WTMAP_TRY(r.get(h.version));
  if (h.version > kIndexFormatVersion) {
    return corrupt_data(path + ": index format version " + std::to_string(h.version) + " is newer than this wtmap reads (" +
                        std::to_string(kIndexFormatVersion) + "); rebuild the index or update wtmap");
  }
  if (h.version == 0) return corrupt_data(path + ": corrupt index header (format version 0)");
  if (h.version >= kGeneralIndexVersion) {
    std::uint32_t alphabet = 0;
    WTMAP_TRY(r.get(alphabet));
    // Version 2 holds the one-strand alphabets only, version 3 DNA only.
    const bool dna = alphabet == static_cast<std::uint32_t>(Alphabet::dna);
    const bool general = alphabet == static_cast<std::uint32_t>(Alphabet::protein) || alphabet == static_cast<std::uint32_t>(Alphabet::byte);
    if (h.version == kGeneralIndexVersion ? !general : !dna) {
      return corrupt_data(path + ": corrupt index header (alphabet " + std::to_string(alphabet) + ")");
    }
    h.alphabet = static_cast<Alphabet>(alphabet);
  }
  WTMAP_TRY(r.get(h.sample_rate));
  WTMAP_TRY(r.get(h.forward_length));
  WTMAP_TRY(r.get(h.rows));
  WTMAP_TRY(r.finish());
  if (h.sample_rate == 0 || h.sample_rate > kMaxSampleRate) {
    return corrupt_data(path + ": corrupt index header (HEAD: sample rate " + std::to_string(h.sample_rate) + " is not in [1, " +
                        std::to_string(kMaxSampleRate) + "])");
  }
  return h;
}

std::string contigs_payload(const std::vector<Contig>& contigs) {
  std::string s;
  put<std::uint64_t>(s, contigs.size());
  for (const Contig& c : contigs) {
    put<std::uint32_t>(s, static_cast<std::uint32_t>(c.name.size()));
    s += c.name;
    put<std::uint64_t>(s, c.length);
  }
  return s;
}

std::string fragments_payload(const std::vector<Fragment>& fragments) {
  std::string s;
  put<std::uint64_t>(s, fragments.size());  // field by field: no struct padding on disk
  for (const Fragment& f : fragments) {
    put(s, f.text_start);
    put(s, f.length);
    put(s, f.contig_offset);
    put(s, f.contig);
  }
  return s;
}

Result<std::vector<Contig>> read_contigs(std::istream& in, const std::string& path) {
  auto payload = read_section(in, "CTGS", path);
  if (!payload.ok()) return payload.status();
  std::vector<Contig> contigs;
  PayloadReader r(*payload, path + ": contig");
  std::uint64_t count = 0;
  WTMAP_TRY(r.get(count));
  if (count > payload->size()) return corrupt_data(path + ": contig section has an impossible count");
  contigs.resize(count);
  std::unordered_set<std::string_view> names;  // views of contigs' names: the vector no longer grows
  for (Contig& c : contigs) {
    WTMAP_TRY(r.get_string(c.name));
    WTMAP_TRY(r.get(c.length));
    // A name the indexer would refuse (empty, or one SAM cannot hold: a newline would inject
    // header lines into every output) or one seen before.
    if (!is_valid_contig_name(c.name) || !names.insert(c.name).second) {
      return corrupt_data(path + ": corrupt contig table (CTGS: contig " + std::to_string(&c - contigs.data()) +
                          " has an empty, invalid or repeated name)");
    }
  }
  WTMAP_TRY(r.finish());
  return contigs;
}

Result<std::vector<Fragment>> read_fragments(std::istream& in, const std::string& path, const std::vector<Contig>& contigs,
                                             std::uint64_t m) {
  auto payload = read_section(in, "FRAG", path);
  if (!payload.ok()) return payload.status();
  std::vector<Fragment> fragments;
  PayloadReader r(*payload, path + ": fragment");
  std::uint64_t count = 0;
  WTMAP_TRY(r.get(count));
  if (count > m + 1 || count > payload->size()) return corrupt_data(path + ": fragment section has an impossible count");
  fragments.resize(count);
  for (Fragment& f : fragments) {
    WTMAP_TRY(r.get(f.text_start));
    WTMAP_TRY(r.get(f.length));
    WTMAP_TRY(r.get(f.contig_offset));
    WTMAP_TRY(r.get(f.contig));
  }
  WTMAP_TRY(r.finish());
  // Both texts are the fragments one separator apart (reference.cpp), so the separators, the
  // special rows and the samples after them all follow from this table.
  if (fragments.empty()) return corrupt_data(path + ": corrupt fragment table (FRAG: no fragments)");
  for (std::size_t j = 0; j < fragments.size(); ++j) {
    const Fragment& f = fragments[j];
    const std::uint64_t start = j == 0 ? 0 : fragments[j - 1].text_start + fragments[j - 1].length + 1;
    if (f.contig >= contigs.size() || f.length == 0 || f.length > contigs[f.contig].length ||
        f.contig_offset > contigs[f.contig].length - f.length) {
      return corrupt_data(path + ": corrupt fragment table (FRAG: fragment " + std::to_string(j) + " lies outside its contig)");
    }
    if (f.text_start != start || f.length > m || f.text_start > m - f.length) {
      return corrupt_data(path + ": corrupt fragment table (FRAG: fragment " + std::to_string(j) +
                          " is not one separator after the previous one inside the text)");
    }
  }
  if (fragments.back().text_start + fragments.back().length != m) {
    return corrupt_data(path + ": corrupt fragment table (FRAG: the last fragment does not end the text)");
  }
  return fragments;
}

Status write_samples(const SampledSuffixArray& sa, std::ostream& out) {
  auto values = sa.samples();
  if (!values.ok()) return values.status();
  return write_array(out, *values);
}

// The samples are exactly the text positions that are multiples of s or follow a separator:
// each one of them (a sample past them would be a wrong answer, one >= n an out-of-bounds
// position), none twice, and as many as there are. Linear and on all CPU threads, with one bit
// per sampled position (set atomically: a bit already set is a sample seen twice).
Status check_samples(const std::vector<std::uint64_t>& samples, std::uint64_t n, std::uint32_t sample_rate,
                     const std::vector<std::uint64_t>& after_separator) {
  const std::uint64_t multiples = (n + sample_rate - 1) / sample_rate;
  std::vector<std::uint64_t> others;  // the positions after a separator that are no multiple of s
  for (const std::uint64_t p : after_separator) {
    if (p % sample_rate != 0) others.push_back(p);
  }
  const std::uint64_t expected = multiples + others.size();
  if (samples.size() != expected) {
    return corrupt_data("the SA sample section (SMPA) holds " + std::to_string(samples.size()) + " samples, sample rate " +
                        std::to_string(sample_rate) + " and the separators imply " + std::to_string(expected));
  }
  std::vector<std::atomic<std::uint64_t>> seen((expected + 63) / 64);
  for (auto& word : seen) word.store(0, std::memory_order_relaxed);
  std::mutex bad_mutex;  // taken on a corrupt file only
  std::uint64_t first_bad = samples.size();  // the least index of a bad sample found
  int why = 0;                               // 1 >= n, 2 not a sampled position, 3 twice
  wtmap::detail::parallel_for_ranges(samples.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t j = begin; j < end; ++j) {
      const std::uint64_t p = samples[j];
      std::uint64_t slot = p / sample_rate;
      int bad = p >= n ? 1 : 0;
      if (bad == 0 && p % sample_rate != 0) {
        const auto it = std::lower_bound(others.begin(), others.end(), p);
        bad = it == others.end() || *it != p ? 2 : 0;
        slot = multiples + static_cast<std::uint64_t>(it - others.begin());
      }
      if (bad == 0) {
        const std::uint64_t bit = std::uint64_t{1} << (slot % 64);
        bad = seen[slot / 64].fetch_or(bit, std::memory_order_relaxed) & bit ? 3 : 0;
      }
      if (bad == 0) continue;
      std::lock_guard<std::mutex> lock(bad_mutex);
      if (j < first_bad) {
        first_bad = j;
        why = bad;
      }
      return;
    }
  }, 1 << 16);
  if (first_bad == samples.size()) return {};
  const std::string p = "an SMPA sample, " + std::to_string(samples[first_bad]) + ",";
  switch (why) {
    case 1: return corrupt_data(p + " is not below the text length " + std::to_string(n));
    case 2: return corrupt_data(p + " is neither a multiple of the sample rate nor after a separator");
    default: return corrupt_data(p + " occurs twice");
  }
}

Result<SampledSuffixArray> read_sampled_suffix_array(std::istream& in, const std::string& path, std::uint64_t n,
                                                     std::uint32_t sample_rate,
                                                     const std::vector<std::uint64_t>& after_separator,
                                                     Backend backend) {
  auto marks = read_streamed_section(in, "SMPB", path, [&](std::istream& payload, std::uint64_t) {
    return RankSelectBitVector::load(payload, backend);
  });
  if (!marks.ok()) return marks.status();
  auto samples = read_streamed_section(in, "SMPA", path, [&](std::istream& payload, std::uint64_t size) {
    return read_u64_array(payload, size, n, "SA sample");
  });
  if (!samples.ok()) return samples.status();
  if (marks->size() != n) return corrupt_data(path + ": sections disagree on the text length");
  if (Status checked = check_samples(*samples, n, sample_rate, after_separator); !checked.ok()) {
    return corrupt_data(path + ": " + checked.message());
  }
  auto sa = SampledSuffixArray::create(std::move(marks.value()), *samples);
  if (!sa.ok()) return Status{sa.status().code(), path + ": " + sa.status().message()};
  return sa;
}

Status expect_end(std::istream& in, const std::string& path) {
  if (in.peek() != std::char_traits<char>::eof()) return corrupt_data(path + ": trailing bytes after the last section");
  return {};
}

}  // namespace wtmap::fmindex::file

namespace wtmap::fmindex {

Result<Alphabet> read_index_alphabet(const std::string& path) {
  std::ifstream in;
  auto header = file::open_index(in, path);
  if (!header.ok()) return header.status();
  return header->alphabet;
}

Result<std::vector<Contig>> read_index_contigs(const std::string& path) {
  std::ifstream in;
  auto header = file::open_index(in, path);
  if (!header.ok()) return header.status();
  return file::read_contigs(in, path);
}

}  // namespace wtmap::fmindex
