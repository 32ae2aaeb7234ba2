// An index file taken apart into its sections and put back together with every section's CRC-32
// recomputed: what a crafted index looks like to the loader (files are shared and downloaded, and
// a crafted one carries valid checksums), for the crafted-index suite and fuzz harnesses whose
// mutations should reach the structural checks rather than stop at a checksum.
//
// Written from the file format, independently of the loader (fmindex/src/index_file.hpp): a file
// is a sequence of sections, each a 4-byte tag, a little-endian u64 payload size, the payload and
// the u32 CRC-32 (zlib's) of the payload. Field offsets inside the payloads that the suites edit
// (the C array, counted u64 arrays, the fragment table, core's bit vector and wavelet tree
// headers) are given here too. No dependence on gtest or on wtmap's libraries: zlib only.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace wtmap::fmtest {

class IndexFileEditor {
 public:
  struct Section {
    std::string tag;  // four characters
    std::string payload;
  };

  // Throws std::runtime_error when `file` is not a sequence of whole sections.
  explicit IndexFileEditor(const std::string& file) {
    std::size_t at = 0;
    while (at < file.size()) {
      if (file.size() - at < 12) throw std::runtime_error("index file editor: a section header is cut short");
      Section s;
      s.tag = file.substr(at, 4);
      const std::uint64_t size = get<std::uint64_t>(file, at + 4);
      if (size > file.size() - at - 12 || file.size() - at - 12 - size < 4) {
        throw std::runtime_error("index file editor: the " + s.tag + " section is cut short");
      }
      s.payload = file.substr(at + 12, size);
      at += 12 + size + 4;
      sections_.push_back(std::move(s));
    }
  }

  std::vector<Section>& sections() { return sections_; }
  bool has(const std::string& tag) const {
    for (const Section& s : sections_) {
      if (s.tag == tag) return true;
    }
    return false;
  }
  // The payload of the section `tag`; throws std::runtime_error when there is none.
  std::string& payload(const std::string& tag) {
    for (Section& s : sections_) {
      if (s.tag == tag) return s.payload;
    }
    throw std::runtime_error("index file editor: no " + tag + " section");
  }

  // The file again, every size and CRC-32 recomputed from the (edited) payloads.
  std::string file() const {
    std::string out;
    for (const Section& s : sections_) {
      out += s.tag;
      put<std::uint64_t>(out, s.payload.size());
      out += s.payload;
      put<std::uint32_t>(out, crc32_of(s.payload));
    }
    return out;
  }

  static std::uint32_t crc32_of(const std::string& bytes) {
    uLong crc = crc32(0L, Z_NULL, 0);
    for (std::size_t at = 0; at < bytes.size(); at += 1u << 30) {  // uInt lengths
      const std::size_t n = std::min<std::size_t>(bytes.size() - at, 1u << 30);
      crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(n));
    }
    return static_cast<std::uint32_t>(crc);
  }

  // Little-endian fields (the format's; the hosts wtmap runs on are little-endian).
  template <class T>
  static T get(const std::string& s, std::size_t at) {
    if (at + sizeof(T) > s.size()) throw std::runtime_error("index file editor: field past the payload");
    T v;
    std::memcpy(&v, s.data() + at, sizeof v);
    return v;
  }
  template <class T>
  static void set(std::string& s, std::size_t at, T v) {
    if (at + sizeof(T) > s.size()) throw std::runtime_error("index file editor: field past the payload");
    std::memcpy(&s[at], &v, sizeof v);
  }
  template <class T>
  static void put(std::string& s, T v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
  }

 private:
  std::vector<Section> sections_;
};

// ---- where fields lie inside the payloads ------------------------------------------------------

namespace index_layout {

// A counted u64 array (SPEC, SMPA, PACK): the count, then the values.
constexpr std::size_t kArrayCount = 0;
inline std::size_t array_value(std::size_t j) { return 8 + 8 * j; }

// CARR: C[0..3], u64 each (C[4] = n is implied).
inline std::size_t c_entry(unsigned c) { return 8 * c; }

// FRAG: the count, then per fragment u64 text_start, u64 length, u64 contig_offset, u32 contig.
constexpr std::size_t kFragmentBytes = 28;
inline std::size_t fragment_length(std::size_t j) { return 8 + kFragmentBytes * j + 8; }

// core's bit vector (SMPB): magic (8), version, n, ones, the byte count of its storage (u64
// each), then the storage: the bits (32-bit words, the array padded to 128 bytes), then the rank
// records of 32 bytes (u64 ones before the record, u16 ones before each of its 12 blocks).
constexpr std::size_t kBitVectorSize = 16, kBitVectorOnes = 24, kBitVectorStorage = 40;
inline std::size_t bit_vector_bits_bytes(std::uint64_t n) { return ((n + 31) / 32 * 4 + 127) / 128 * 128; }
inline std::size_t bit_vector_records(std::uint64_t n) { return kBitVectorStorage + bit_vector_bits_bytes(n); }

// core's wavelet tree (BWTW): magic (8), version, arity, symbol width, n, sigma, extracted (u64
// each), per level its size and its counts (1 for arity 2, 4 for arity 4), the storage's byte
// count, then the storage, level 0 first. A 4-ary level is a sequence of 64-byte blocks: four
// u16 counts of each symbol before the block (within its superblock), then 7 words of symbols.
constexpr std::size_t kTreeArity = 16, kTreeSize = 32, kTreeSigma = 40, kTreeLevels = 56;
inline unsigned tree_levels(std::uint64_t arity, std::uint64_t sigma) {
  unsigned bits = 0;
  while ((std::uint64_t{1} << bits) < sigma) ++bits;
  return arity == 2 ? bits : (bits + 1) / 2;
}
inline std::size_t tree_level_counts(const std::string& payload, unsigned level) {  // the level's first count
  const std::uint64_t arity = IndexFileEditor::get<std::uint64_t>(payload, kTreeArity);
  return kTreeLevels + level * 8 * (1 + (arity == 2 ? 1 : 4)) + 8;
}
inline std::size_t tree_storage(const std::string& payload) {
  const std::uint64_t arity = IndexFileEditor::get<std::uint64_t>(payload, kTreeArity);
  const std::uint64_t sigma = IndexFileEditor::get<std::uint64_t>(payload, kTreeSigma);
  return kTreeLevels + tree_levels(arity, sigma) * 8 * (1 + (arity == 2 ? 1 : 4)) + 8;
}

}  // namespace index_layout
}  // namespace wtmap::fmtest
