#include "wtmap/fmindex/fm_index.hpp"

#include <divsufsort64.h>
#include <zlib.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <unistd.h>

#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::fmindex {
namespace {

// Symbols of the suffix-sorted text: $ < # < A < C < G < T.
constexpr std::uint8_t kTextEnd = 0, kTextSeparator = 1, kTextBase = 2;

constexpr char kMagic[8] = {'W', 'T', 'M', 'A', 'P', 'I', 'D', 'X'};
constexpr std::uint32_t kVersion = 1;

// ---- batched queries (core/detail/batch.cuh) -------------------------------------------------

struct SearchOp {
  using In = PatternRef;
  using Out = SaInterval;
  FmIndexView v;
  const std::uint8_t* codes;  // on the backend
  std::uint64_t codes_size;
  WTMAP_HD bool valid(const In& p) const { return p.offset + p.length <= codes_size; }
  WTMAP_HD Out operator()(const In& p) const { return v.backward_search(codes + p.offset, p.length); }
  std::string why_invalid(const In& p) const {
    return "pattern at offset " + std::to_string(p.offset) + " runs past the " + std::to_string(codes_size) + " codes";
  }
};

struct LocateOp {
  using In = std::uint64_t;
  using Out = std::uint64_t;
  FmIndexView v;
  WTMAP_HD bool valid(In r) const { return r < v.rows; }
  WTMAP_HD Out operator()(In r) const { return v.locate(r); }
  std::string why_invalid(In r) const { return "row " + std::to_string(r) + " is not below " + std::to_string(v.rows); }
};

// ---- index file sections ----------------------------------------------------------------------

// CRC-32 of `size` bytes, in pieces on all CPU threads joined with crc32_combine: zlib's CRC
// runs at about 0.5 GB/s on one core, which made it most of the load time of a gigabase index.
std::uint32_t parallel_crc(const char* data, std::uint64_t size) {
  constexpr std::uint64_t kPiece = std::uint64_t{16} << 20;
  const std::uint64_t pieces = (size + kPiece - 1) / kPiece;
  std::vector<uLong> crcs(pieces);
  detail::parallel_for_ranges(pieces, [&](std::uint64_t begin, std::uint64_t end) {
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

// A counted array of 64-bit values from a section's payload of `size` bytes: the count is
// checked against the payload and `max_items` before anything is allocated.
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

struct SectionWriter {
  std::ostream& out;
  void write(const char (&tag)[5], const std::string& payload) {
    const std::uint64_t size = payload.size();
    const std::uint32_t crc = parallel_crc(payload.data(), payload.size());
    out.write(tag, 4);
    out.write(reinterpret_cast<const char*>(&size), 8);
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    out.write(reinterpret_cast<const char*>(&crc), 4);
  }
};

template <class T>
void put(std::string& s, const T& v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }
template <class T>
void put_array(std::string& s, const std::vector<T>& v) {
  put<std::uint64_t>(s, v.size());
  s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
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
    std::memcpy(v.data(), s_.data() + pos_, n * sizeof(T));
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
  if (size + 4 > static_cast<std::uint64_t>(end - here)) {
    return corrupt_data(path + ": truncated index file (the " + std::string(tag) + " section is cut short)");
  }
  return size;
}

// The payload of one section as a stream of its own: at most `size` bytes of the file, their
// CRC-32 taken on the way (large reads go straight into the reader's memory and are summed in
// parallel). The large sections (tree, sampled rows, SA samples) are parsed from it directly,
// not from a zero-filled copy of the section: one pass less over memory the size of the index.
class SectionBuffer : public std::streambuf {
 public:
  SectionBuffer(std::istream& in, std::uint64_t size) : in_(in), left_(size) {}
  std::uint32_t crc() const { return static_cast<std::uint32_t>(crc_); }
  bool all_consumed() const { return left_ == 0 && gptr() == egptr(); }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const std::streamsize got = fill(buffer_, std::min<std::uint64_t>(sizeof buffer_, left_));
    if (got <= 0) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + got);
    return traits_type::to_int_type(buffer_[0]);
  }
  std::streamsize xsgetn(char* dst, std::streamsize count) override {
    const std::streamsize buffered = std::min<std::streamsize>(count, egptr() - gptr());
    if (buffered > 0) {
      std::memcpy(dst, gptr(), static_cast<std::size_t>(buffered));
      gbump(static_cast<int>(buffered));
    }
    return buffered + fill(dst + buffered, std::min<std::uint64_t>(static_cast<std::uint64_t>(count - buffered), left_));
  }

 private:
  std::streamsize fill(char* dst, std::uint64_t n) {
    if (n == 0) return 0;
    in_.read(dst, static_cast<std::streamsize>(n));
    const std::streamsize got = in_.gcount();
    crc_ = crc32_combine64(crc_, parallel_crc(dst, static_cast<std::uint64_t>(got)), got);
    left_ -= static_cast<std::uint64_t>(got);
    return got;
  }

  std::istream& in_;
  std::uint64_t left_;
  uLong crc_ = crc32(0L, Z_NULL, 0);
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
  auto parsed = parse(payload, *size);
  if (!parsed.ok()) return Status{parsed.status().code(), path + ": " + parsed.status().message()};
  if (!buffer.all_consumed()) return corrupt_data(path + ": corrupt index file (the " + std::string(tag) + " section is longer than its content)");
  std::uint32_t stored = 0;
  in.read(reinterpret_cast<char*>(&stored), 4);
  if (!in) return corrupt_data(path + ": truncated index file (in the " + std::string(tag) + " section)");
  if (buffer.crc() != stored) return corrupt_data(path + ": corrupt index file (checksum mismatch in the " + std::string(tag) + " section)");
  return parsed;
}

// A small section's whole payload, checked like any other.
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

}  // namespace

FmIndex::FmIndex(FmIndex&&) noexcept = default;
FmIndex& FmIndex::operator=(FmIndex&&) noexcept = default;
FmIndex::~FmIndex() = default;

std::size_t FmIndex::size_in_bytes() const { return bwt_.size_in_bytes() + sampled_.size_in_bytes() + tables_.size(); }

Result<FmIndex> FmIndex::build(const Reference& ref, const FmIndexOptions& options) {
  auto progress = [&](const std::string& s) {
    if (options.progress) options.progress(s);
  };
  if (options.sample_rate == 0) return invalid_argument("the SA sample rate must be at least 1");
  const std::uint64_t m = ref.forward.size();
  const std::uint64_t n = 2 * m + 2;
  // T = F # rc(F) $
  std::vector<std::uint8_t> text(n);
  for (std::uint64_t i = 0; i < m; ++i) {
    const std::uint8_t c = ref.forward[i];
    text[i] = c == kSeparator ? kTextSeparator : static_cast<std::uint8_t>(kTextBase + c);
    text[2 * m - i] = c == kSeparator ? kTextSeparator : static_cast<std::uint8_t>(kTextBase + 3 - c);
  }
  text[m] = kTextSeparator;
  text[n - 1] = kTextEnd;

  progress("suffix array of " + std::to_string(n) + " symbols (divsufsort64)");
  std::vector<saidx64_t> sa(n);
  if (divsufsort64(text.data(), sa.data(), static_cast<saidx64_t>(n)) != 0) {
    return Status{StatusCode::out_of_memory, "divsufsort64 failed (out of memory?)"};
  }

  progress("BWT and SA samples");
  // This pass reads text[SA[r] - 1] at random, a cache miss per row (65 s for a 2 Gbp text on
  // one core), so it runs on all threads: each piece of whole 32-row words fills its own bits and
  // keeps its own lists, which are joined in row order afterwards.
  struct Piece {
    std::vector<std::uint64_t> samples, special_rows;
    std::uint64_t counts[kTextBase + 4] = {0, 0, 0, 0, 0, 0};
  };
  std::vector<std::uint8_t> bwt(n);
  std::vector<std::uint32_t> sampled_words((n + 31) / 32, 0);
  const std::uint64_t words = sampled_words.size();
  const std::uint64_t num_pieces = std::min<std::uint64_t>(words, 4 * wtmap::detail::cpu_threads());
  std::vector<Piece> pieces(num_pieces);
  std::atomic<bool> out_of_memory{false};
  wtmap::detail::parallel_for_ranges(num_pieces, [&](std::uint64_t first, std::uint64_t last) {
    try {
      for (std::uint64_t p = first; p < last; ++p) {
        Piece& piece = pieces[p];
        const std::uint64_t end = std::min(n, words * (p + 1) / num_pieces * 32);
        for (std::uint64_t r = words * p / num_pieces * 32; r < end; ++r) {
          const auto pos = static_cast<std::uint64_t>(sa[r]);
          const std::uint8_t prev = text[pos == 0 ? n - 1 : pos - 1];
          ++piece.counts[text[pos]];
          const bool special = prev < kTextBase;
          bwt[r] = special ? 0 : static_cast<std::uint8_t>(prev - kTextBase);
          if (special) piece.special_rows.push_back(r);
          if (special || pos % options.sample_rate == 0) {
            sampled_words[r / 32] |= 1u << (r % 32);
            piece.samples.push_back(pos);
          }
        }
      }
    } catch (const std::bad_alloc&) {
      out_of_memory = true;
    }
  }, 1);
  if (out_of_memory) return Status{StatusCode::out_of_memory, "out of host memory for the SA samples"};
  std::vector<std::uint64_t> samples, special_rows;
  std::uint64_t counts[kTextBase + 4] = {0, 0, 0, 0, 0, 0};
  {
    std::uint64_t num_samples = 0, num_special = 0;
    for (const Piece& piece : pieces) num_samples += piece.samples.size(), num_special += piece.special_rows.size();
    samples.reserve(num_samples);
    special_rows.reserve(num_special);
  }
  for (Piece& piece : pieces) {
    samples.insert(samples.end(), piece.samples.begin(), piece.samples.end());
    special_rows.insert(special_rows.end(), piece.special_rows.begin(), piece.special_rows.end());
    for (unsigned c = 0; c < kTextBase + 4; ++c) counts[c] += piece.counts[c];
    piece = Piece{};
  }
  sa.clear();
  sa.shrink_to_fit();

  progress("wavelet tree and sampled-row vector on the " + std::string(backend_name(options.backend)));
  auto tree = WaveletTree<std::uint8_t, 4>::build(bwt.data(), n, {options.backend, 4});
  if (!tree.ok()) return tree.status();
  auto sampled = RankSelectBitVector::build(sampled_words.data(), n, options.backend);
  if (!sampled.ok()) return sampled.status();

  FmIndex index(std::move(tree.value()), std::move(sampled.value()));
  index.C_[0] = counts[kTextEnd] + counts[kTextSeparator];
  for (unsigned c = 0; c < 4; ++c) index.C_[c + 1] = index.C_[c] + counts[kTextBase + c];
  index.special_rows_host_ = std::move(special_rows);
  index.contigs_ = ref.contigs;
  index.fragments_ = ref.fragments;
  index.forward_length_ = m;
  index.sample_rate_ = options.sample_rate;
  WTMAP_TRY(index.bind(samples));
  return std::move(index);
}

FmIndex::FmIndex(WaveletTree<std::uint8_t, 4>&& bwt, RankSelectBitVector&& sampled)
    : bwt_(std::move(bwt)), sampled_(std::move(sampled)) {}

// Lays out the backend tables (special rows, their bucket counts, SA samples) and the view.
Status FmIndex::bind(const std::vector<std::uint64_t>& samples) {
  const std::uint64_t n = bwt_.size();
  const std::uint64_t buckets = (n >> FmIndexView::kBucketShift) + 1;
  std::vector<std::uint64_t> before(buckets, 0);
  for (std::uint64_t b = 0, j = 0; b < buckets; ++b) {
    while (j < special_rows_host_.size() && special_rows_host_[j] < (b << FmIndexView::kBucketShift)) ++j;
    before[b] = j;
  }
  const std::uint64_t specials = special_rows_host_.size();
  auto tables = Buffer::allocate(backend(), (specials + buckets + samples.size()) * 8, "FM-index tables");
  if (!tables.ok()) return tables.status();
  tables_ = std::move(tables.value());
  WTMAP_TRY(tables_.copy_from_host(0, special_rows_host_.data(), specials * 8));
  WTMAP_TRY(tables_.copy_from_host(specials * 8, before.data(), buckets * 8));
  WTMAP_TRY(tables_.copy_from_host((specials + buckets) * 8, samples.data(), samples.size() * 8));
  num_samples_ = samples.size();
  if (num_samples_ != sampled_.ones()) return corrupt_data("FM-index: SA samples do not match the sampled rows");

  const auto* base = reinterpret_cast<const std::uint64_t*>(tables_.data());
  view_ = FmIndexView{};
  view_.bwt = bwt_.view();
  view_.rows = n;
  for (unsigned c = 0; c < 4; ++c) view_.C[c] = C_[c];
  view_.C[4] = n;
  view_.special_rows = base;
  view_.num_special = specials;
  view_.special_before_bucket = base + specials;
  view_.sampled = sampled_.view();
  view_.sa_samples = base + specials + buckets;
  if (!workspace_) workspace_ = std::make_unique<detail::QueryWorkspace>();
  return {};
}

ReferenceHit FmIndex::to_reference(std::uint64_t p, std::uint64_t length) const {
  const std::uint64_t m = forward_length_;
  ReferenceHit hit;
  std::uint64_t forward_start = p;
  if (p > m) {  // reverse-complement half: rc(F) starts at m + 1
    hit.reverse = true;
    forward_start = m - (p - (m + 1)) - length;
  }
  auto it = std::upper_bound(fragments_.begin(), fragments_.end(), forward_start,
                             [](std::uint64_t pos, const Fragment& f) { return pos < f.text_start; });
  const Fragment& f = *(it - 1);
  hit.contig = f.contig;
  hit.position = f.contig_offset + (forward_start - f.text_start);
  return hit;
}

Status FmIndex::search(const std::uint8_t* codes, std::uint64_t codes_size, const PatternRef* patterns,
                       std::size_t count, SaInterval* out) const {
  const std::uint8_t* backend_codes = codes;
  std::lock_guard<std::mutex> lock(workspace_->scratch_mutex);
  if (backend() == Backend::gpu) {
    WTMAP_TRY(workspace_->reserve_scratch(codes_size));
    WTMAP_TRY(detail::upload_staged(*workspace_, workspace_->scratch.data(), codes, codes_size));
    backend_codes = reinterpret_cast<const std::uint8_t*>(workspace_->scratch.data());
  }
  return detail::run_batch(backend(), SearchOp{view_, backend_codes, codes_size}, patterns, out, count, *workspace_,
                           "search");
}

Status FmIndex::locate(const std::uint64_t* rows, std::uint64_t* text_positions, std::size_t count) const {
  return detail::run_batch(backend(), LocateOp{view_}, rows, text_positions, count, *workspace_, "locate");
}

Status FmIndex::save(const std::string& path) const {
  std::string header, contigs, fragments, carray, specials, tree, sampled, samples;
  header.append(kMagic, 8);
  put(header, kVersion);
  put<std::uint32_t>(header, sample_rate_);
  put<std::uint64_t>(header, forward_length_);
  put<std::uint64_t>(header, bwt_.size());
  put<std::uint64_t>(contigs, contigs_.size());
  for (const Contig& c : contigs_) {
    put<std::uint32_t>(contigs, static_cast<std::uint32_t>(c.name.size()));
    contigs += c.name;
    put<std::uint64_t>(contigs, c.length);
  }
  put<std::uint64_t>(fragments, fragments_.size());  // field by field: no struct padding on disk
  for (const Fragment& f : fragments_) {
    put(fragments, f.text_start);
    put(fragments, f.length);
    put(fragments, f.contig_offset);
    put(fragments, f.contig);
  }
  for (unsigned c = 0; c < 4; ++c) put(carray, C_[c]);
  put_array(specials, special_rows_host_);
  {
    std::ostringstream s;
    WTMAP_TRY(bwt_.save(s));
    tree = s.str();
  }
  {
    std::ostringstream s;
    WTMAP_TRY(sampled_.save(s));
    sampled = s.str();
  }
  std::vector<std::uint64_t> sample_values(num_samples_);
  const std::uint64_t sample_offset = (special_rows_host_.size() + (bwt_.size() >> FmIndexView::kBucketShift) + 1) * 8;
  WTMAP_TRY(tables_.copy_to_host(sample_offset, sample_values.data(), num_samples_ * 8));
  put_array(samples, sample_values);

  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return {StatusCode::io_error, temporary + ": cannot open for writing"};
    SectionWriter w{out};
    w.write("HEAD", header);
    w.write("CTGS", contigs);
    w.write("FRAG", fragments);
    w.write("CARR", carray);
    w.write("SPEC", specials);
    w.write("BWTW", tree);
    w.write("SMPB", sampled);
    w.write("SMPA", samples);
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      return {StatusCode::io_error, temporary + ": write failed (disk full?)"};
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return {StatusCode::io_error, "cannot rename " + temporary + " to " + path};
  }
  return {};
}

Result<FmIndex> FmIndex::load(const std::string& path, Backend backend) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status{StatusCode::io_error, path + ": cannot open the index file"};
  char magic[8] = {};
  in.read(magic, 8);
  in.seekg(0);
  if (!in || std::memcmp(magic + 0, "HEAD", 4) != 0) {
    return corrupt_data(path + ": not a wtmap index file");
  }
  auto header = read_section(in, "HEAD", path);
  if (!header.ok()) return header.status();
  PayloadReader h(*header, path + ": header");
  char file_magic[8];
  std::uint32_t version = 0, sample_rate = 0;
  std::uint64_t m = 0, n = 0;
  for (char& c : file_magic) WTMAP_TRY(h.get(c));
  if (std::memcmp(file_magic, kMagic, 8) != 0) return corrupt_data(path + ": not a wtmap index file");
  WTMAP_TRY(h.get(version));
  if (version > kVersion) {
    return corrupt_data(path + ": index format version " + std::to_string(version) + " is newer than this wtmap reads (" +
                        std::to_string(kVersion) + "); rebuild the index or update wtmap");
  }
  WTMAP_TRY(h.get(sample_rate));
  WTMAP_TRY(h.get(m));
  WTMAP_TRY(h.get(n));
  WTMAP_TRY(h.finish());
  if (n != 2 * m + 2 || sample_rate == 0) return corrupt_data(path + ": inconsistent index header");

  auto contigs = read_section(in, "CTGS", path);
  if (!contigs.ok()) return contigs.status();
  std::vector<Contig> contig_table;
  {
    PayloadReader r(*contigs, path + ": contig");
    std::uint64_t count = 0;
    WTMAP_TRY(r.get(count));
    if (count > contigs->size()) return corrupt_data(path + ": contig section has an impossible count");
    contig_table.resize(count);
    for (Contig& c : contig_table) {
      WTMAP_TRY(r.get_string(c.name));
      WTMAP_TRY(r.get(c.length));
    }
    WTMAP_TRY(r.finish());
  }
  auto fragments = read_section(in, "FRAG", path);
  if (!fragments.ok()) return fragments.status();
  std::vector<Fragment> fragment_table;
  {
    PayloadReader r(*fragments, path + ": fragment");
    std::uint64_t count = 0;
    WTMAP_TRY(r.get(count));
    if (count > m + 1 || count > fragments->size()) return corrupt_data(path + ": fragment section has an impossible count");
    fragment_table.resize(count);
    for (Fragment& f : fragment_table) {
      WTMAP_TRY(r.get(f.text_start));
      WTMAP_TRY(r.get(f.length));
      WTMAP_TRY(r.get(f.contig_offset));
      WTMAP_TRY(r.get(f.contig));
    }
    WTMAP_TRY(r.finish());
  }
  auto carray = read_section(in, "CARR", path);
  if (!carray.ok()) return carray.status();
  std::uint64_t C[4];
  {
    PayloadReader r(*carray, path + ": C array");
    for (auto& c : C) WTMAP_TRY(r.get(c));
    WTMAP_TRY(r.finish());
  }
  auto specials = read_section(in, "SPEC", path);
  if (!specials.ok()) return specials.status();
  std::vector<std::uint64_t> special_rows;
  {
    PayloadReader r(*specials, path + ": special-row");
    WTMAP_TRY(r.get_array(special_rows, n));
    WTMAP_TRY(r.finish());
  }
  auto tree = read_streamed_section(in, "BWTW", path, [&](std::istream& payload, std::uint64_t) {
    return WaveletTree<std::uint8_t, 4>::load(payload, backend);
  });
  if (!tree.ok()) return tree.status();
  auto sampled = read_streamed_section(in, "SMPB", path, [&](std::istream& payload, std::uint64_t) {
    return RankSelectBitVector::load(payload, backend);
  });
  if (!sampled.ok()) return sampled.status();
  auto samples = read_streamed_section(in, "SMPA", path, [&](std::istream& payload, std::uint64_t size) {
    return read_u64_array(payload, size, n, "SA sample");
  });
  if (!samples.ok()) return samples.status();
  if (in.peek() != std::char_traits<char>::eof()) return corrupt_data(path + ": trailing bytes after the last section");

  // Cross-checks that keep every query in bounds.
  if (tree->size() != n || sampled->size() != n || tree->sigma() != 4) return corrupt_data(path + ": sections disagree on the text length");
  for (unsigned c = 0; c < 4; ++c) {
    if (C[c] > n || (c > 0 && C[c] < C[c - 1])) return corrupt_data(path + ": corrupt C array");
  }
  for (std::size_t j = 0; j < special_rows.size(); ++j) {
    if (special_rows[j] >= n || (j > 0 && special_rows[j] <= special_rows[j - 1])) return corrupt_data(path + ": corrupt special-row table");
  }
  for (const std::uint64_t s : *samples) {
    if (s >= n) return corrupt_data(path + ": corrupt SA samples");
  }
  for (std::size_t j = 0; j < fragment_table.size(); ++j) {
    const Fragment& f = fragment_table[j];
    if (f.contig >= contig_table.size() || f.text_start + f.length > m ||
        f.contig_offset + f.length > contig_table[f.contig].length || (j == 0 && f.text_start != 0) ||
        (j > 0 && f.text_start <= fragment_table[j - 1].text_start)) {
      return corrupt_data(path + ": corrupt fragment table");
    }
  }
  if (fragment_table.empty()) return corrupt_data(path + ": corrupt fragment table");

  FmIndex index(std::move(tree.value()), std::move(sampled.value()));
  for (unsigned c = 0; c < 4; ++c) index.C_[c] = C[c];
  index.special_rows_host_ = std::move(special_rows);
  index.contigs_ = std::move(contig_table);
  index.fragments_ = std::move(fragment_table);
  index.forward_length_ = m;
  index.sample_rate_ = sample_rate;
  WTMAP_TRY(index.bind(*samples));
  return std::move(index);
}

}  // namespace wtmap::fmindex
