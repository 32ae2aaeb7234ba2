// wtmap io: telling a complete BGZF input from a cut one.
//
// A BGZF file (bgzip's blocked gzip) ends with an empty block, its end-of-file marker. htslib only
// warns when it is missing, and with reading threads (bgzf_mt) a file cut inside a block simply
// ends early, at a point that varies from run to run: a cut download would give a silent partial
// result. Every BGZF input of wtmap goes through these checks instead.
#pragma once

#include <string>

#include "wtmap/core/status.hpp"

struct BGZF;  // htslib/bgzf.h

namespace wtmap::io {

// Before reading: a seekable BGZF file without its end-of-file marker is refused at once. Plain
// gzip and uncompressed input pass (their own decoders see a cut); so does a stream, which cannot
// be checked before it is read (check_bgzf_ended does it after).
Status check_bgzf_marker(BGZF* file, const std::string& path);

// Once reading has reached the end: refused if the last block read was not the marker.
Status check_bgzf_ended(BGZF* file, const std::string& path);

}  // namespace wtmap::io
