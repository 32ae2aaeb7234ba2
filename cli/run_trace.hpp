// wtmap CLI (internal): `wtmap align`'s run trace (WTMAP_TRACE=FILE), for developers: the
// pipeline's stages batch by batch and every gapped mapping thread's steps (GappedMapper's
// StepSpan, device calls included) as spans in the Trace Event Format, which chrome://tracing
// and Perfetto (ui.perfetto.dev) open. A diagnostic, not an interface: its tracks and step names
// may change. Space: some 10^3 spans per 10^6 reads.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "wtmap/core/status.hpp"

namespace wtmap::cli {

// The environment variable naming the trace's file.
inline constexpr const char* kTraceVariable = "WTMAP_TRACE";

struct TraceSpan {
  std::string name;
  std::chrono::steady_clock::time_point begin, end;
};

// One timeline row: a pipeline stage ("parse", ...) or a mapping thread.
struct TraceTrack {
  std::string name;
  std::vector<TraceSpan> spans;
};

// The tracks as one JSON object ({"traceEvents": [...]}): a name and an order per track, a
// complete event ("ph": "X") per span, times in microseconds from `origin`.
std::string trace_json(const std::vector<TraceTrack>& tracks, std::chrono::steady_clock::time_point origin);

// Writes trace_json to `path` (write_and_commit: through a temporary, renamed when complete).
Status write_trace(const std::string& path, const std::vector<TraceTrack>& tracks,
                   std::chrono::steady_clock::time_point origin);

}  // namespace wtmap::cli
