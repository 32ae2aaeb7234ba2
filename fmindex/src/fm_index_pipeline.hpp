// wtmap fmindex (internal): the one build, load and save pipeline of both FM-indexes, FmIndex
// (DNA) and GeneralFmIndex (protein, byte), with what differs per alphabet supplied by a policy
// type (pipeline::DnaIndexPolicy in fm_index.cu, pipeline::GeneralIndexPolicy in general_fm_index.cu),
// as core's rank_select_build.cu keeps its backends' steps apart around the shared ones.
//
// Build: check the options -> the alphabet encodes the text T (checking its reference) -> suffix
// array (divsufsort64 on the host, 8 bytes a symbol: the peak; or blockwise, a round of rows at a
// time) -> BWT, SA samples, separator rows and symbol counts as the rows come, on all CPU threads,
// O(n) -> the alphabet's wavelet tree and the
// sampled-row vector on the backend -> the alphabet's own tables -> the index.
// Load: header (the alphabet checks its kind and sizes) -> contigs, fragments -> the alphabet's own
// sections -> BWTW -> SMPB, SMPA -> end of file -> cross-checks (tree size here, the alphabet's
// tables against the tree) -> the index. Save: the shared header fields, the alphabet's version,
// field and own sections, then file::write_index. Every section is checked as index_file.hpp says.
//
// The text T of either alphabet holds $ as 0, # (a separator) as 1 and the symbols from 2 up. A
// symbol's tree code is its text code less Policy::kTreeCodeOffset, and the rows whose BWT symbol
// is # or $ hold tree code 0 (for DNA a placeholder A listed as a special row; for the general
// alphabets the merged separator code).
//
// A Policy provides (see the two policies for their meaning per alphabet):
//   types      Index, Reference, Tree (the WaveletTree of the BWT)
//   constants  kTreeCodeOffset; kListsSeparatorRows (whether the build keeps the separator rows)
//   build      encode_text(ref) -> Result<text>; sigma(); tree_name();
//              keep_build_tables(ref, BwtRows&, backend) -> Status
//   load       check_header(header, path); read_tables(in, path, header, contigs, fragments, parts,
//              backend); sampled_after_separators(fragments, m); check_tables(tree, sa, fragments,
//              parts, path)
//   both       make_index(tree, sa, contigs, fragments, m, sample_rate) -> Result<Index>
//   save       static tree(index); static file_parts(index, header&, own sections&) -> Status
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "index_file.hpp"
#include "wtmap/core/detail/default_init_allocator.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/fm_index_base.hpp"
#include "wtmap/fmindex/sampled_suffix_array.hpp"

namespace wtmap::fmindex::pipeline {

// Codes of the suffix-sorted text shared by both alphabets: $ < # < every symbol.
constexpr std::uint8_t kTextEnd = 0, kTextSeparator = 1, kFirstTextSymbol = 2;

// T's codes, a byte a symbol. New items are left unwritten (encode_text writes every one, the
// DNA policy on all CPU threads, so that the first touch of a human genome's 6 GB of pages is
// spread over them too, not made and zeroed on one).
using TextCodes = std::vector<std::uint8_t, wtmap::detail::DefaultInitialising<std::allocator<std::uint8_t>>>;

// What the one pass over the suffix array derives.
struct BwtRows {
  std::vector<std::uint8_t> bwt;  // tree codes, n of them
  SampledSuffixArray::Builder samples;
  std::vector<std::uint64_t> separator_rows;  // ascending: the rows whose BWT symbol is # or $
  std::array<std::uint64_t, 256> counts{};    // per tree code, over the other rows
};

// The BWT in tree codes (text code less tree_code_offset, 0 after # or $), the SA samples every
// sample_rate positions and after every separator, the separator rows (if list_separator_rows)
// and the counts, from the suffix array of `text` (freed here) as options.sa_builder sorts it:
// whole by divsufsort64, or a round of rows at a time by blockwise_suffix_array. Either way the
// rows pass through one BwtRowsCollector, so both give the same bytes.
Result<BwtRows> suffix_sorted_rows(TextCodes text, std::uint32_t sample_rate, const FmIndexOptions& options,
                                   std::uint8_t tree_code_offset, bool list_separator_rows);

template <class Policy>
Result<typename Policy::Index> build_index(const typename Policy::Reference& ref, const FmIndexOptions& options,
                                           Policy policy) {
  auto progress = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  if (options.sample_rate == 0) return invalid_argument("the SA sample rate must be at least 1");
  auto text = policy.encode_text(ref);
  if (!text.ok()) return text.status();
  const std::uint64_t n = text->size();
  const std::uint32_t sample_rate =
      options.sample_rate == kSampleRateBySize ? default_sample_rate(n) : options.sample_rate;

  progress("suffix array of " + std::to_string(n) + " symbols (" + suffix_array_builder_name(options.sa_builder) +
           "), BWT and SA samples (every " + std::to_string(sample_rate) + " text positions)");
  auto rows = suffix_sorted_rows(std::move(text.value()), sample_rate, options, Policy::kTreeCodeOffset,
                                 Policy::kListsSeparatorRows);
  if (!rows.ok()) return rows.status();

  progress(policy.tree_name() + " and sampled-row vector on the " + std::string(backend_name(options.backend)));
  auto tree = Policy::Tree::build(rows->bwt.data(), n, {options.backend, policy.sigma()});
  if (!tree.ok()) return tree.status();
  auto sampled = rows->samples.finish(options.backend);
  if (!sampled.ok()) return sampled.status();
  WTMAP_TRY(policy.keep_build_tables(ref, *rows, options.backend));
  return policy.make_index(std::move(tree.value()), std::move(sampled.value()), ref.contigs, ref.fragments,
                           ref.forward.size(), sample_rate);
}

// load_index without its guard against an allocation that throws.
template <class Policy>
Result<typename Policy::Index> load_sections(const std::string& path, Backend backend, IndexParts parts, Policy& policy) {
  std::ifstream in;
  auto header = file::open_index(in, path);
  if (!header.ok()) return header.status();
  WTMAP_TRY(policy.check_header(*header, path));
  const std::uint64_t m = header->forward_length, n = header->rows;
  auto contigs = file::read_contigs(in, path);
  if (!contigs.ok()) return contigs.status();
  auto fragments = file::read_fragments(in, path, *contigs, m);
  if (!fragments.ok()) return fragments.status();
  WTMAP_TRY(policy.read_tables(in, path, *header, *contigs, *fragments, parts, backend));
  auto tree = file::read_streamed_section(in, "BWTW", path, [&](std::istream& payload, std::uint64_t) {
    return Policy::Tree::load(payload, backend);
  });
  if (!tree.ok()) return tree.status();
  auto sa = parts == IndexParts::all
                ? file::read_sampled_suffix_array(in, path, n, header->sample_rate,
                                                  policy.sampled_after_separators(*fragments, m), backend)
                : SampledSuffixArray::empty(backend);
  if (!sa.ok()) return sa.status();
  if (parts == IndexParts::all) WTMAP_TRY(file::expect_end(in, path));

  // Cross-checks that keep every query in bounds.
  if (tree->size() != n) return corrupt_data(path + ": sections disagree on the text length");
  WTMAP_TRY(policy.check_tables(*tree, *sa, *fragments, parts, path));
  return policy.make_index(std::move(tree.value()), std::move(sa.value()), std::move(contigs.value()),
                           std::move(fragments.value()), m, header->sample_rate);
}

template <class Policy>
Result<typename Policy::Index> load_index(const std::string& path, Backend backend, IndexParts parts, Policy policy) {
  // The sections' large arrays report a failed allocation themselves; under a tight address-space
  // limit any small one (a stream's buffer, a contig's name) may fail first.
  try {
    return load_sections(path, backend, parts, policy);
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::out_of_memory, path + ": not enough host memory to load the index"};
  }
}

template <class Policy>
Status save_index(const typename Policy::Index& index, const std::string& path) {
  if (!index.can_locate()) {
    return invalid_argument(path + ": an index loaded for search only, without its sampled suffix array, cannot be saved");
  }
  file::IndexHeader header;
  header.sample_rate = index.sample_rate();
  header.forward_length = index.forward_length();
  header.rows = index.view().rows;
  std::vector<file::Section> own;
  WTMAP_TRY(Policy::file_parts(index, header, own));
  return file::write_index(path, header, index.contigs(), index.fragments(), std::move(own), Policy::tree(index),
                           index.sampled_suffix_array());
}

}  // namespace wtmap::fmindex::pipeline
