// The section framing of a wtmap index file (fmindex/src/index_file.hpp: 4-byte tag, u64 payload
// size, payload, u32 CRC-32 of the payload), restated for fuzz_index_loader's mutator, which
// edits one payload and writes its size and checksum anew so that the loader's structural checks,
// not the checksums, are what an edit meets.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace wtmap::fuzz {

struct IndexSection {
  std::string tag;  // four bytes
  std::string payload;
};

// The sections of `bytes`, or false if it is not a whole number of them.
inline bool split_sections(const std::uint8_t* bytes, std::size_t size, std::vector<IndexSection>& sections) {
  sections.clear();
  std::size_t at = 0;
  while (at < size) {
    if (size - at < 16) return false;
    std::uint64_t length = 0;
    std::memcpy(&length, bytes + at + 4, 8);
    if (length > size - at - 16) return false;
    sections.push_back({std::string(reinterpret_cast<const char*>(bytes) + at, 4),
                        std::string(reinterpret_cast<const char*>(bytes) + at + 12, length)});
    at += 16 + length;
  }
  return !sections.empty();
}

inline std::string join_sections(const std::vector<IndexSection>& sections) {
  std::string out;
  for (const IndexSection& s : sections) {
    const std::uint64_t length = s.payload.size();
    const auto crc = static_cast<std::uint32_t>(
        crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(s.payload.data()), static_cast<uInt>(length)));
    out += s.tag;
    out.append(reinterpret_cast<const char*>(&length), 8);
    out += s.payload;
    out.append(reinterpret_cast<const char*>(&crc), 4);
  }
  return out;
}

}  // namespace wtmap::fuzz
