// wtmap core (internal): little helpers for the binary save/load of core structures.
// Format: 8-byte magic, u64 format version, fields as little-endian u64, then raw buffers
// preceded by their byte count. The fmindex file wraps these in checksummed sections.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::detail {

constexpr std::uint64_t kFormatVersion = 1;
constexpr std::size_t kCopyChunk = std::size_t{1} << 24;  // stage device buffers 16 MiB at a time

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {}
  void bytes(const void* p, std::size_t n) { out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n)); }
  void u64(std::uint64_t v) { bytes(&v, sizeof v); }
  Status buffer(const Buffer& b) {
    u64(b.size());
    std::vector<char> stage(std::min(b.size(), kCopyChunk));
    for (std::size_t off = 0; off < b.size(); off += kCopyChunk) {
      const std::size_t n = std::min(kCopyChunk, b.size() - off);
      WTMAP_TRY(b.copy_to_host(off, stage.data(), n));
      bytes(stage.data(), n);
    }
    return {};
  }
  Status status(const char* what) const {
    if (out_.good()) return {};
    return {StatusCode::io_error, std::string("writing the ") + what + " failed"};
  }

 private:
  std::ostream& out_;
};

class Reader {
 public:
  Reader(std::istream& in, const char* what) : in_(in), what_(what) {}

  Status bytes(void* p, std::size_t n, const char* field) {
    in_.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    if (static_cast<std::size_t>(in_.gcount()) != n) {
      return corrupt_data(what_ + ": stream ends inside the " + field + " (truncated file?)");
    }
    return {};
  }
  Status u64(std::uint64_t& v, const char* field = "header") { return bytes(&v, sizeof v, field); }
  Status magic(const char (&expected)[8]) {
    char m[8];
    WTMAP_TRY(bytes(m, 8, "magic number"));
    if (std::memcmp(m, expected, 8) != 0) return corrupt_data(what_ + ": bad magic number (not a wtmap " + what_ + ")");
    return {};
  }
  Status version() {
    std::uint64_t v = 0;
    WTMAP_TRY(u64(v));
    if (v > kFormatVersion) {
      return corrupt_data(what_ + ": format version " + std::to_string(v) + " is newer than this build reads (" +
                          std::to_string(kFormatVersion) + ")");
    }
    if (v == 0) return corrupt_data(what_ + ": format version 0 is invalid");
    return {};
  }
  // A buffer whose recorded size must equal `expected_size`, loaded onto `backend`.
  Result<Buffer> buffer(Backend backend, std::uint64_t expected_size) {
    std::uint64_t size = 0;
    WTMAP_TRY(u64(size, "buffer size"));
    if (size != expected_size) {
      return corrupt_data(what_ + ": data block holds " + std::to_string(size) + " bytes, the header implies " +
                          std::to_string(expected_size));
    }
    auto b = Buffer::allocate(backend, size, what_.c_str());
    if (!b.ok()) return b.status();
    if (backend == Backend::cpu) {  // straight into the buffer
      WTMAP_TRY(bytes(b->data(), size, "data block"));
      return b;
    }
    std::vector<char> stage(std::min<std::uint64_t>(size, kCopyChunk));
    for (std::uint64_t off = 0; off < size; off += kCopyChunk) {
      const std::size_t n = std::min<std::uint64_t>(kCopyChunk, size - off);
      WTMAP_TRY(bytes(stage.data(), n, "data block"));
      WTMAP_TRY(b->copy_from_host(off, stage.data(), n));
    }
    return b;
  }

 private:
  std::istream& in_;
  std::string what_;
};

}  // namespace wtmap::detail
