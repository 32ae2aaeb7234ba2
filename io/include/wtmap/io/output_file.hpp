// wtmap io: writing a result file (an index, SAM/BAM) so that no run ever destroys data -- not a
// file it was asked to replace, not an input, not a special file -- and checking where it goes
// before the work that makes it.
//
// The rules, as a user of samtools or bwa would want them:
// - a regular file, new or existing, is written to a temporary in the same folder (so the final
//   rename(2) is atomic), which replaces it only once complete; an existing file keeps its mode,
//   a new one gets 0666 & ~umask, what open(2) would have given it;
// - a path through symbolic links is written through: the target is replaced, the link stays;
// - a character device, FIFO or socket (/dev/null, /dev/stdout, a named pipe) is written in place:
//   there is nothing to rename over, and a rename (as root) would replace it by a regular file;
// - an output that is one of the run's inputs (same device and inode) is refused;
// - an empty path, a directory, a missing or unwritable folder is refused before any work;
// - the temporary goes when the writer fails, and on SIGINT, SIGTERM, SIGHUP and SIGPIPE
//   (install_signal_cleanup).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "wtmap/core/status.hpp"

namespace wtmap::io {

// Checks that `path` can take a result file without creating anything (see the rules above):
// for a command to call before hours of work. `inputs` are the run's input files ("-" ignored).
Status check_output_path(const std::string& path, const std::vector<std::string>& inputs = {});

// One result file being written. create() checks the place (check_output_path) and, for a
// regular file, makes the temporary (mode 0600 while it is written); the writer opens
// write_path(), writes, closes, then calls commit(). Space: one path. Move-only.
class OutputFile {
 public:
  static Result<OutputFile> create(const std::string& path, const std::vector<std::string>& inputs = {});

  OutputFile(OutputFile&&) noexcept;
  OutputFile& operator=(OutputFile&&) noexcept;
  ~OutputFile();  // removes the temporary unless commit() succeeded

  const std::string& path() const;        // as the user named it, for messages
  const std::string& write_path() const;  // where to write: the temporary, or the special file itself
  bool in_place() const;                  // a special file, written directly

  // Gives the temporary the final mode and renames it over the (resolved) path; nothing to do for
  // a special file. The writer must have closed write_path() first.
  Status commit();

 private:
  struct Impl;
  explicit OutputFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A scratch file a command needs while it writes a result (a sorted output's runs): made new
// (O_EXCL) as `stem` + "." and 16 random letters (mode 0600), removed by the destructor and, like an
// OutputFile's temporary, by the signals install_signal_cleanup handles. Never committed. The
// signal table holds 128 temporaries at once (each beyond is removed by its destructor only).
// Space: one path. Move-only.
class TemporaryFile {
 public:
  static Result<TemporaryFile> create(const std::string& stem);

  TemporaryFile(TemporaryFile&&) noexcept;
  TemporaryFile& operator=(TemporaryFile&&) noexcept;
  ~TemporaryFile();  // removes the file

  const std::string& path() const;

 private:
  struct Impl;
  explicit TemporaryFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGPIPE that remove every uncommitted
// temporary of the process, then let the signal take its default action (so the shell sees which
// one ended the run); a signal ignored before (nohup) stays ignored. For commands, not
// libraries: call it once at start-up.
void install_signal_cleanup();

}  // namespace wtmap::io
