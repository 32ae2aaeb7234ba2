// wtmap CLI (internal): small helpers shared by the subcommands.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

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
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  const char* command_;
  std::chrono::steady_clock::time_point start_;
};

int fail(const char* command, const Status& s);
int usage_error(const char* command, const std::string& message, const char* usage);

// --device auto|gpu|cpu; auto falls back to the CPU with a note on stderr.
Result<Backend> choose_backend(const std::string& device, const Log& log);

// Parses an unsigned integer option value; false if it is not one.
bool parse_count(const char* text, std::uint64_t& value);

std::string index_path(const std::string& prefix);

int index_main(int argc, char** argv);
int count_main(int argc, char** argv);
int align_main(int argc, char** argv);

}  // namespace wtmap::cli
