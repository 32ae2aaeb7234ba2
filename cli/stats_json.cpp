#include "stats_json.hpp"

#include <cmath>
#include <cstdio>

#include "build_info.hpp"

namespace wtmap::cli {
namespace {

// A JSON number: finite doubles with 6 decimals, else null.
std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[64];
  std::snprintf(text, sizeof text, "%.6f", value);
  return text;
}

std::string count(std::uint64_t value) { return std::to_string(value); }

// `"key": value` pairs joined into an object, indented `depth` levels.
class JsonObject {
 public:
  explicit JsonObject(int depth) : depth_(depth) {}
  JsonObject& add(const std::string& key, const std::string& value) {
    text_ += (text_.empty() ? "" : ",") + std::string("\n") + std::string(2 * (depth_ + 1), ' ') + "\"" + key + "\": " + value;
    return *this;
  }
  std::string str() const { return "{" + text_ + "\n" + std::string(2 * depth_, ' ') + "}"; }

 private:
  int depth_;
  std::string text_;
};

// MAPQ 0 .. the highest present, each the count of mapped reads' primary records.
std::string mapq_histogram(const aligner::SamWriter::Counts& counts) {
  std::size_t end = counts.primary_mapq.size();
  while (end > 0 && counts.primary_mapq[end - 1] == 0) --end;
  std::string text = "[";
  for (std::size_t q = 0; q < end; ++q) text += (q == 0 ? "" : ", ") + count(counts.primary_mapq[q]);
  return text + "]";
}

std::string pairs_object(const aligner::PairTotals& t, const aligner::InsertSizeModel& m,
                         const aligner::SamWriter::Counts& counts) {
  JsonObject model(2);
  model.add("source", m.given ? "\"given\"" : m.known ? "\"estimated\"" : "\"none\"");
  if (m.known) {
    model.add("pairs_sampled", count(m.pairs)).add("mean", number(m.mean)).add("sd", number(m.std));
    model.add("proper_low", std::to_string(m.low)).add("proper_high", std::to_string(m.high));
  }
  // -I's argument for this exact model: runs over parts of this input pair with it as this run did.
  model.add("option", "\"" + aligner::insert_size_option(m) + "\"");
  // Of the proper pairs written: |TLEN| at their first mates, the population standard deviation.
  const double n = static_cast<double>(counts.proper_pairs);
  const double mean = counts.insert_sum / n;
  const double variance = std::max(0.0, counts.insert_squares / n - mean * mean);
  JsonObject proper(2);
  proper.add("pairs", count(counts.proper_pairs)).add("mean", number(mean)).add("sd", number(std::sqrt(variance)));
  JsonObject pairs(1);
  pairs.add("pairs", count(t.pairs)).add("properly_paired", count(t.proper)).add("both_mapped", count(t.both_mapped));
  pairs.add("both_mapped_different_contigs", count(t.different_contigs)).add("singletons", count(t.singletons));
  pairs.add("insert_size_model", model.str()).add("proper_insert_size", proper.str());
  return pairs.str();
}

}  // namespace

std::string stats_json(const RunStats& s) {
  const aligner::AlignTotals& t = s.totals;
  JsonObject top(0);
  top.add("program", "\"wtmap align\"").add("version", "\"" + std::string(kVersion) + "\"");
  top.add("mode", "\"" + std::string(s.mode) + "\"").add("seconds", number(s.seconds));
  top.add("reads", count(t.reads)).add("mapped", count(t.mapped)).add("mapq_above_0", count(t.unique));
  top.add("split_reads", count(t.split));
  top.add("too_short", count(t.too_short)).add("too_long", count(t.too_long)).add("stopped_by_work_cap", count(t.capped));
  top.add("mapq_histogram", s.counts != nullptr ? mapq_histogram(*s.counts) : "[]");
  const bool paired = s.pairs != nullptr && s.insert_size != nullptr && s.counts != nullptr;
  top.add("pairs", paired ? pairs_object(*s.pairs, *s.insert_size, *s.counts) : "null");
  return top.str() + "\n";
}

}  // namespace wtmap::cli
