#include "run_trace.hpp"

#include <cstdio>
#include <utility>

#include "cli.hpp"
#include "wtmap/io/output_file.hpp"

namespace wtmap::cli {
namespace {

// `text` as a JSON string (quotes, backslashes and control characters escaped).
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

double microseconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

}  // namespace

std::string trace_json(const std::vector<TraceTrack>& tracks, std::chrono::steady_clock::time_point origin) {
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [";
  bool first = true;
  auto event = [&](const std::string& text) {
    out += first ? "\n" : ",\n";
    out += text;
    first = false;
  };
  char number[64];
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    const std::string tid = std::to_string(t + 1);
    event("{\"ph\": \"M\", \"pid\": 1, \"tid\": " + tid + ", \"name\": \"thread_name\", \"args\": {\"name\": " +
          json_string(tracks[t].name) + "}}");
    event("{\"ph\": \"M\", \"pid\": 1, \"tid\": " + tid + ", \"name\": \"thread_sort_index\", \"args\": {\"sort_index\": " +
          tid + "}}");
    for (const TraceSpan& span : tracks[t].spans) {
      std::snprintf(number, sizeof number, "\"ts\": %.3f, \"dur\": %.3f", microseconds(span.begin - origin),
                    microseconds(span.end - span.begin));
      event("{\"ph\": \"X\", \"pid\": 1, \"tid\": " + tid + ", \"name\": " + json_string(span.name) + ", " + number + "}");
    }
  }
  return out + "\n]}\n";
}

Status write_trace(const std::string& path, const std::vector<TraceTrack>& tracks,
                   std::chrono::steady_clock::time_point origin) {
  auto file = io::OutputFile::create(path);
  if (!file.ok()) return file.status();
  return write_and_commit(*file, trace_json(tracks, origin));
}

}  // namespace wtmap::cli
