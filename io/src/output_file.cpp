#include "wtmap/io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>

namespace wtmap::io {
namespace {

// ---- Temporaries a signal must remove ---------------------------------------------------------
// A fixed table, since a signal handler may only call async-signal-safe functions (unlink, raise)
// and read memory that is not being changed under it: a slot's path is written before its state
// says `ready`, and cleared only after it stops saying so.
constexpr int kSlots = 128;  // a sorted output's runs: up to 15 per merge level (bam_sorter.hpp)
constexpr std::size_t kSlotPath = 4096;
enum SlotState : int { kFree = 0, kClaimed = 1, kReady = 2 };
struct TemporarySlot {
  std::atomic<int> state{kFree};
  char path[kSlotPath];
};
TemporarySlot g_temporaries[kSlots];

// The slot that now names `path`, or -1 (no room, or a path too long): that temporary is then only
// removed by its owner, not by a signal.
int register_temporary(const std::string& path) {
  if (path.size() >= kSlotPath) return -1;
  for (int s = 0; s < kSlots; ++s) {
    int expected = kFree;
    if (g_temporaries[s].state.compare_exchange_strong(expected, kClaimed)) {
      std::memcpy(g_temporaries[s].path, path.c_str(), path.size() + 1);
      g_temporaries[s].state.store(kReady);
      return s;
    }
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot >= 0) g_temporaries[slot].state.store(kFree);
}

// A new empty file `stem` + "." + 16 random letters and digits, registered for removal on a signal
// *before* it is made, so that no moment leaves it made but unknown to the handler (a signal
// between mkstemp(3) and the registration left a temporary behind under load); O_EXCL: never a
// file or link someone put there, and a name already taken (one in 62^16) is passed over, its
// registration dropped first. Its name in *name and its slot in *slot; false with errno set, and
// both left as they were, if it cannot be made. OutputFile's and TemporaryFile's temporaries both.
bool make_registered_temporary(const std::string& stem, std::string* name, int* slot) {
  static const char kLetters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device entropy;
  std::mt19937_64 random((std::uint64_t{entropy()} << 32) ^ entropy());
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string made = stem + ".";
    for (int k = 0; k < 16; ++k) made += kLetters[random() % (sizeof kLetters - 1)];
    const int registered = register_temporary(made);
    const int fd = open(made.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      close(fd);
      *slot = registered;
      *name = std::move(made);
      return true;
    }
    const int error = errno;
    unregister_temporary(registered);
    if (error != EEXIST) {
      errno = error;
      return false;
    }
  }
  errno = EEXIST;
  return false;
}

extern "C" void remove_temporaries_and_die(int signal) {
  for (TemporarySlot& slot : g_temporaries) {
    if (slot.state.load() == kReady) unlink(slot.path);
  }
  // SA_RESETHAND restored the default action; the signal, blocked while this runs, is delivered
  // again on return.
  raise(signal);
}

// ---- Paths ------------------------------------------------------------------------------------

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The kernel's own files (/dev/stdout, /proc/self/fd/1, a terminal): written in place, never
// replaced, whatever they stand for -- `-o /dev/stdout` with stdout redirected to a file must write
// into that file's open description, as samtools does.
bool is_kernel_path(const std::string& path) { return path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0; }

struct Followed {
  std::string path;            // the file writing to the original path would write
  bool through_kernel = false;  // a link on the way was one of the kernel's files
};

// `path` with every symbolic link of its last component followed (the folders above are the
// kernel's to follow). A dangling link resolves to the missing target, which is then created.
Result<Followed> follow_links(const std::string& path) {
  constexpr int kMostLinks = 40;  // as the kernel's ELOOP limit
  Followed f{path, is_kernel_path(path)};
  for (int hop = 0; hop < kMostLinks; ++hop) {
    struct stat st {};
    if (lstat(f.path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return f;
    std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    const ssize_t n = readlink(f.path.c_str(), target.data(), target.size());
    if (n < 0) return Status{StatusCode::io_error, path + ": cannot read the symbolic link " + f.path};
    target.resize(static_cast<std::size_t>(n));
    f.path = !target.empty() && target[0] == '/' ? target : folder_of(f.path) + "/" + target;
    f.through_kernel = f.through_kernel || is_kernel_path(f.path);
  }
  return invalid_argument(path + ": too many levels of symbolic links");
}

bool is_special(mode_t mode) { return S_ISCHR(mode) || S_ISFIFO(mode) || S_ISSOCK(mode); }

// What the checks found out about a valid output path.
struct Place {
  std::string resolved;   // after the links; the path itself for a file written in place
  bool exists = false;
  bool special = false;   // written in place
  mode_t mode = 0;        // an existing regular file's permission bits
};

Status refuse_inputs(const std::string& path, const struct stat& st, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    struct stat in {};
    if (input != "-" && stat(input.c_str(), &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
      return invalid_argument(path + ": is also an input of this run (" + input + "); refusing to overwrite it");
    }
  }
  return {};
}

Result<Place> examine(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) return invalid_argument("the output path is empty");
  Result<Followed> followed = follow_links(path);
  if (!followed.ok()) return followed.status();
  Place place;
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {  // the kernel follows every link, its own too
    if (S_ISDIR(st.st_mode)) return invalid_argument(path + ": is a directory, not a file to write");
    if (S_ISBLK(st.st_mode)) return invalid_argument(path + ": is a block device; refusing to write to it");
    WTMAP_TRY(refuse_inputs(path, st, inputs));
    place.exists = true;
    place.mode = st.st_mode & 07777;
    if (is_special(st.st_mode) || followed->through_kernel) {
      if (access(path.c_str(), W_OK) != 0) return Status{StatusCode::io_error, path + ": cannot write to it (" + std::strerror(errno) + ")"};
      place.special = true;
      place.resolved = path;
      return place;
    }
  } else if (errno != ENOENT) {
    return Status{StatusCode::io_error, path + ": " + std::strerror(errno)};
  }
  // A regular file is made beside its final name: the folder must take a new file.
  place.resolved = followed->path;
  const std::string folder = folder_of(place.resolved);
  struct stat dir {};
  if (stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) {
    return invalid_argument(path + ": the folder " + folder + " does not exist");
  }
  if (access(folder.c_str(), W_OK | X_OK) != 0) {
    return Status{StatusCode::io_error, path + ": cannot create files in " + folder + " (" + std::strerror(errno) + ")"};
  }
  return place;
}

mode_t current_umask() {
  // umask(2) can only be read by setting it; this runs before the threads that create files.
  const mode_t mask = umask(022);
  umask(mask);
  return mask;
}

}  // namespace

Status check_output_path(const std::string& path, const std::vector<std::string>& inputs) {
  return examine(path, inputs).status();
}

struct OutputFile::Impl {
  std::string path, resolved, temporary;
  bool special = false;
  bool committed = false;
  mode_t final_mode = 0;
  int slot = -1;

  ~Impl() {
    if (!committed && !temporary.empty()) unlink(temporary.c_str());
    unregister_temporary(slot);
  }
};

OutputFile::OutputFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OutputFile::OutputFile(OutputFile&&) noexcept = default;
OutputFile& OutputFile::operator=(OutputFile&&) noexcept = default;
OutputFile::~OutputFile() = default;

const std::string& OutputFile::path() const { return impl_->path; }
const std::string& OutputFile::write_path() const { return impl_->special ? impl_->resolved : impl_->temporary; }
bool OutputFile::in_place() const { return impl_->special; }

Result<OutputFile> OutputFile::create(const std::string& path, const std::vector<std::string>& inputs) {
  Result<Place> examined = examine(path, inputs);
  if (!examined.ok()) return examined.status();
  const Place& place = *examined;
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->resolved = place.resolved;
  impl->special = place.special;
  if (place.special) return OutputFile(std::move(impl));
  impl->final_mode = place.exists ? place.mode : (0666 & ~current_umask());
  if (!make_registered_temporary(folder_of(place.resolved) + "/" + name_of(place.resolved) + ".tmp", &impl->temporary, &impl->slot)) {
    return Status{StatusCode::io_error, path + ": cannot create a temporary file beside it (" + std::strerror(errno) + ")"};
  }
  return OutputFile(std::move(impl));
}

Status OutputFile::commit() {
  Impl& impl = *impl_;
  if (impl.special || impl.committed) return {};
  // The mode of the file it replaces, read again now: it may have changed during the run.
  struct stat st {};
  mode_t mode = impl.final_mode;
  if (stat(impl.resolved.c_str(), &st) == 0 && S_ISREG(st.st_mode)) mode = st.st_mode & 07777;
  if (chmod(impl.temporary.c_str(), mode) != 0 || rename(impl.temporary.c_str(), impl.resolved.c_str()) != 0) {
    return {StatusCode::io_error, "cannot rename " + impl.temporary + " to " + impl.path + " (" + std::strerror(errno) + ")"};
  }
  impl.committed = true;
  unregister_temporary(impl.slot);
  impl.slot = -1;
  return {};
}

struct TemporaryFile::Impl {
  std::string path;
  int slot = -1;

  ~Impl() {
    unlink(path.c_str());
    unregister_temporary(slot);
  }
};

TemporaryFile::TemporaryFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TemporaryFile::TemporaryFile(TemporaryFile&&) noexcept = default;
TemporaryFile& TemporaryFile::operator=(TemporaryFile&&) noexcept = default;
TemporaryFile::~TemporaryFile() = default;

const std::string& TemporaryFile::path() const { return impl_->path; }

Result<TemporaryFile> TemporaryFile::create(const std::string& stem) {
  auto impl = std::make_unique<Impl>();
  if (!make_registered_temporary(stem, &impl->path, &impl->slot)) {
    return Status{StatusCode::io_error, "cannot create the temporary file " + stem + ".XXXXXXXXXXXXXXXX (" + std::strerror(errno) + ")"};
  }
  return TemporaryFile(std::move(impl));
}

void install_signal_cleanup() {
  // SIGPIPE too: a run whose stderr (or stdout) goes into a pipe that closed dies of it.
  for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    struct sigaction old {};
    if (sigaction(signal, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;  // nohup's SIGHUP stays ignored
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_die;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(signal, &action, nullptr);
  }
}

}  // namespace wtmap::io
