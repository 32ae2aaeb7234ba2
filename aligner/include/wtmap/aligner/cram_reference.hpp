// wtmap aligner: the reference FASTA a CRAM output is encoded against (samtools' --reference),
// checked and made ready before any output file is made.
//
// CRAM stores each read as its differences from the reference (CRAM 3 specification, section
// 10), so the FASTA must hold every contig of the index under the same name and length; htslib
// then writes its MD5 and absolute path into the @SQ lines (M5, UR), where `samtools view` finds
// it again without being told. htslib reads the FASTA at random places through its .fai (and a
// bgzip-compressed FASTA's .gzi). Where they are missing they are made as `samtools faidx` makes
// them (htslib's fai_build3, as htslib's own CRAM writer would on first use), but through
// io::OutputFile -- a temporary renamed into place -- and only once the contigs match, so that a
// refused reference leaves nothing behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::aligner {

// Checks `fasta` as the reference of a CRAM output whose @SQ lines are `contigs` (each shorter
// than 2^31 bases: sam_writer.hpp's check_contigs_fit comes first), in this order: `fasta` a
// readable file (not "-": htslib seeks in it), uncompressed or bgzip-compressed (plain gzip cannot be read at random places: refused,
// with how to recompress it); its .fai (and .gzi) not older than the FASTA (an index of an older
// file would give htslib the wrong bases), made where missing; every contig of `contigs` in it
// with the same length (a FASTA with more contigs passes: htslib looks contigs up by name).
// Every error is one line that names the file and what to do.
// Time: reads the .fai; where one is missing, a pass over the FASTA to build it. Space: the .fai.
Status prepare_cram_reference(const std::string& fasta, const std::vector<fmindex::Contig>& contigs);

}  // namespace wtmap::aligner
