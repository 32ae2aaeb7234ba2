#include "wtmap/io/input_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace wtmap::io {

Status check_input_path(const std::string& path) {
  if (path == "-") return {};
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {StatusCode::io_error, path + ": cannot open for reading (" + std::strerror(errno) + ")"};
  if (S_ISDIR(st.st_mode)) return invalid_argument(path + ": is a directory, not a file");
  if (access(path.c_str(), R_OK) != 0) return {StatusCode::io_error, path + ": cannot open for reading (" + std::strerror(errno) + ")"};
  return {};
}

}  // namespace wtmap::io
