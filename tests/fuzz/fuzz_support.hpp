// Shared pieces of the libFuzzer harnesses (tests/fuzz): a scratch file per process, since the
// readers under test open paths; an input's first byte choosing how its payload is stored (plain,
// gzip or BGZF, so every harness fuzzes the parser behind each decompressor with valid compressed
// data, while the plain form also lets the fuzzer forge compressed bytes of its own); and a check
// that stops the process the way libFuzzer reports as a crash.
#pragma once

#include <htslib/bgzf.h>
#include <unistd.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace wtmap::fuzz {

// Aborts with a message: libFuzzer records the input as a crash. Harnesses check the code under
// test against an independent reference with it.
#define WTMAP_FUZZ_CHECK(condition, message)                                              \
  do {                                                                                    \
    if (!(condition)) {                                                                   \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d): %s\n", #condition, __FILE__,   \
                   __LINE__, std::string(message).c_str());                               \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

// A file name of this process in $TMPDIR (or /tmp), removed at exit. `suffix` matters to code
// that picks a format by extension.
inline const std::string& scratch_path(const char* suffix = "") {
  static const std::string path = [suffix] {
    const char* dir = std::getenv("TMPDIR");
    std::string p = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/wtmap-fuzz-" +
                    std::to_string(getpid()) + suffix;
    static const std::string removed_at_exit = p;
    std::atexit([] { std::remove(removed_at_exit.c_str()); });
    return p;
  }();
  return path;
}

inline void write_file(const std::string& path, std::string_view bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  WTMAP_FUZZ_CHECK(f != nullptr, "cannot create " + path);
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  WTMAP_FUZZ_CHECK(std::fclose(f) == 0 && written, "cannot write " + path);
}

// How a harness input's payload is stored: the low two bits of its first byte.
enum class Storage { plain, gzip, bgzf };

struct StoredInput {
  Storage storage = Storage::plain;
  std::uint8_t flags = 0;  // the first byte, for the harness's own choices (bits 2..7)
  std::string_view payload;
  // Whether the file holds `payload` verbatim *as the readers see it*: plain bytes that happen to
  // begin with the gzip magic are inflated by them, so a reference parse of the payload does not
  // apply.
  bool payload_is_content() const {
    return storage != Storage::plain || payload.size() < 2 || payload[0] != '\x1f' || payload[1] != '\x8b';
  }
};

inline StoredInput split_input(const std::uint8_t* data, std::size_t size) {
  StoredInput in;
  if (size == 0) return in;
  in.flags = data[0];
  const unsigned kind = data[0] & 3u;
  in.storage = kind == 1 ? Storage::gzip : kind == 2 ? Storage::bgzf : Storage::plain;
  in.payload = std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1);
  return in;
}

// One gzip member of `bytes` (zlib's deflate with a gzip wrapper).
inline std::string gzip_member(std::string_view bytes) {
  z_stream z{};
  WTMAP_FUZZ_CHECK(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
  std::string out(deflateBound(&z, bytes.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  WTMAP_FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Writes the input's payload to `path` as it says: plain; gzip, in two members (concatenated, as
// `cat a.gz b.gz` makes) where the payload is long enough; or BGZF, with a block boundary in the
// middle of the payload.
inline void write_stored(const std::string& path, const StoredInput& in) {
  const std::size_t half = in.payload.size() / 2;
  switch (in.storage) {
    case Storage::plain: write_file(path, in.payload); return;
    case Storage::gzip:
      write_file(path, half == 0 ? gzip_member(in.payload)
                                 : gzip_member(in.payload.substr(0, half)) + gzip_member(in.payload.substr(half)));
      return;
    case Storage::bgzf: {
      BGZF* out = bgzf_open(path.c_str(), "w");
      WTMAP_FUZZ_CHECK(out != nullptr, "bgzf_open " + path);
      bool ok = bgzf_write(out, in.payload.data(), half) == static_cast<ssize_t>(half) && bgzf_flush(out) == 0;
      const std::size_t rest = in.payload.size() - half;
      ok = ok && bgzf_write(out, in.payload.data() + half, rest) == static_cast<ssize_t>(rest);
      WTMAP_FUZZ_CHECK(bgzf_close(out) == 0 && ok, "bgzf_write " + path);
      return;
    }
  }
}

// The lines of `text` as the readers split them: at '\n', a final line without one counted
// unless empty, one trailing '\r' dropped from each.
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

}  // namespace wtmap::fuzz
