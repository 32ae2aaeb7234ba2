// wtmap aligner: the clocks of a pipeline's stages, and errors of its threads as Status.
#pragma once

#include <chrono>
#include <new>
#include <vector>

#include "wtmap/core/status.hpp"

namespace wtmap::aligner {

// Busy seconds of one pipeline stage, added up by the thread that runs it (`wtmap align -v`), and
// when each of its calls began and ended (`-v -v`: when each batch went through the stage).
// Space: one Span (two time points) per call; time() adds O(1) to the call it wraps.
class StageClock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Span {
    TimePoint begin, end;
  };

  template <class Body>
  auto time(Body&& body) {
    struct Add {
      StageClock& clock;
      TimePoint start;
      ~Add() {
        clock.add({start, std::chrono::steady_clock::now()});
      }
    } add{*this, std::chrono::steady_clock::now()};
    return body();
  }
  // A call that took `span` (time() adds its own; a pipeline joins the clocks of its GPUs' stages).
  void add(const Span& span) {
    seconds_ += std::chrono::duration<double>(span.end - span.begin).count();
    try {
      spans_.push_back(span);
    } catch (const std::bad_alloc&) {  // the timeline is a diagnostic: a gap in it is no error
    }
  }
  double seconds() const { return seconds_; }
  const std::vector<Span>& spans() const { return spans_; }

 private:
  double seconds_ = 0;
  std::vector<Span> spans_;
};

// Runs body() (returning Status) and turns a std::bad_alloc it throws (a container that cannot
// grow) into a Status: pipeline threads report it like any other error instead of taking
// the process down with std::terminate.
template <class Body>
Status guarded(Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return {StatusCode::out_of_memory, "out of host memory"};
  }
}

}  // namespace wtmap::aligner
