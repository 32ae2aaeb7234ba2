// wtmap CLI (internal): small helpers shared by the subcommands.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::cli {

// Messages on stderr prefixed like bwa's: "[wtmap index] ...".
class Log {
 public:
  explicit Log(const char* command) : command_(command), start_(std::chrono::steady_clock::now()) {}
  template <class... Args>
  void info(const char* fmt, Args... args) const {
    std::fprintf(stderr, "[wtmap %s %7.1fs] ", command_, seconds());
    std::fprintf(stderr, fmt, args...);
    std::fputc('\n', stderr);
  }
  double seconds() const { return seconds_at(std::chrono::steady_clock::now()); }
  // Seconds from the start to t.
  double seconds_at(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }

 private:
  const char* command_;
  std::chrono::steady_clock::time_point start_;
};

// Busy seconds of one pipeline stage, added up by the thread that runs it (`wtmap align -v`), and
// when each of its calls began and ended (`-v -v`: when each batch went through the stage).
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
        const TimePoint now = std::chrono::steady_clock::now();
        clock.seconds_ += std::chrono::duration<double>(now - start).count();
        try {
          clock.spans_.push_back({start, now});
        } catch (const std::bad_alloc&) {  // the timeline is a diagnostic: a gap in it is no error
        }
      }
    } add{*this, std::chrono::steady_clock::now()};
    return body();
  }
  double seconds() const { return seconds_; }
  const std::vector<Span>& spans() const { return spans_; }

 private:
  double seconds_ = 0;
  std::vector<Span> spans_;
};

int fail(const char* command, const Status& s);

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

int usage_error(const char* command, const std::string& message, const char* usage);

// The options every command takes: -t INT, --device auto|gpu|cpu, -h/--help.
struct CommonOptions {
  // -t's bound: far above any host's cores, far below where a thread count would wrap.
  static constexpr std::uint64_t kMostThreads = 4096;
  std::string device = "auto";
  std::uint64_t threads = 0;  // 0: all cores

  enum class Outcome { not_common, consumed, help, bad_threads };
  // Consumes argv[i] (and its value, advancing i) when it is one of the common options.
  Outcome handle(int argc, char** argv, int& i);
  // Applies -t, then picks the backend: auto falls back to the CPU with a note on stderr.
  Result<Backend> apply(const Log& log) const;
};

// Handles a common option or an unknown one for `command`; returns -1 to go on parsing, else
// the exit status (0 after --help, 1 after a usage error).
int handle_common_or_unknown(CommonOptions& common, int argc, char** argv, int& i, const char* command,
                             const char* usage);

// Parses an unsigned integer option value; false if it is not one.
bool parse_count(const char* text, std::uint64_t& value);

std::string index_path(const std::string& prefix);

int index_main(int argc, char** argv);
int count_main(int argc, char** argv);
int align_main(int argc, char** argv);

}  // namespace wtmap::cli
