// wtmap io: what is wrong with an input path, said before a parser meets it as "read error".
#pragma once

#include <string>

#include "wtmap/core/status.hpp"

namespace wtmap::io {

// Ok for "-" (standard input) and for anything that can be opened for reading but a directory;
// else invalid_argument for a directory, io_error with the system's reason (no such file,
// permission denied) for the rest.
Status check_input_path(const std::string& path);

}  // namespace wtmap::io
