// Test support (aligner tests): writing BGZF files with htslib's own writer, so the reader under
// test meets the blocked gzip that bgzip produces.
#pragma once

#include <htslib/bgzf.h>

#include <stdexcept>
#include <string>

namespace wtmap::altest {

inline void write_bgzf(const std::string& path, const std::string& bytes) {
  BGZF* out = bgzf_open(path.c_str(), "w");
  if (out == nullptr) throw std::runtime_error("bgzf_open failed for " + path);
  const ssize_t written = bgzf_write(out, bytes.data(), bytes.size());
  const int closed = bgzf_close(out);
  if (written != static_cast<ssize_t>(bytes.size()) || closed != 0) throw std::runtime_error("bgzf_write failed for " + path);
}

}  // namespace wtmap::altest
