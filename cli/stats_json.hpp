// wtmap CLI (internal): `wtmap align --stats-json FILE`, the closing summary as JSON for
// pipelines (MultiQC, workflow managers), where the lines on stderr are for people.
#pragma once

#include <string>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/pairing.hpp"
#include "wtmap/aligner/sam_writer.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::cli {

// What a finished run reports: the totals of the summary lines, what the output holds
// (SamWriter::Counts), and for pairs the pair totals and the insert-size model (else null).
struct RunStats {
  const char* mode = "gapped";  // or "k-mismatch", "io-only"
  double seconds = 0;
  aligner::AlignTotals totals;  // mapped and MAPQ > 0 of the mates as written
  const aligner::SamWriter::Counts* counts = nullptr;
  const aligner::PairTotals* pairs = nullptr;
  const aligner::InsertSizeModel* insert_size = nullptr;
};

// One JSON object, its keys and their meaning listed in `wtmap align --help` (--stats-json).
// Space: a few hundred bytes; time: one pass over the MAPQ histogram.
std::string stats_json(const RunStats& stats);

}  // namespace wtmap::cli
