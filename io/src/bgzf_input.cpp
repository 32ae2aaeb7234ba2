#include "wtmap/io/bgzf_input.hpp"

#include <htslib/bgzf.h>
#include <htslib/hts.h>

namespace wtmap::io {
namespace {

Status cut_short(const std::string& path) {
  return corrupt_data(path + ": truncated BGZF file (its end-of-file marker is missing); if the file is complete, "
                             "recompress it with bgzip");
}

}  // namespace

Status check_bgzf_marker(BGZF* file, const std::string& path) {
  if (bgzf_compression(file) != bgzf) return {};
  // 1: the marker is there; 2: a stream, not seekable; 0: missing; < 0: a read error.
  const int marker = bgzf_check_EOF(file);
  if (marker == 0) return cut_short(path);
  if (marker < 0) return {StatusCode::io_error, path + ": read error"};
  return {};
}

Status check_bgzf_ended(BGZF* file, const std::string& path) {
  // htslib sets no_eof_block when its reader met the end of the data without the marker, on
  // one thread or several.
  if (bgzf_compression(file) == bgzf && file->no_eof_block) return cut_short(path);
  return {};
}

}  // namespace wtmap::io
