// fuzz_cli's stand-in for _Exit: `wtmap align` ends a complete run with std::_Exit(0), skipping
// its teardown (cmd_align.cpp, leave_finished_run), which would end the fuzzing process too. The
// executable's definition takes the place of the C library's: inside a command (fuzz_cli.cpp sets
// the flag) it throws FinishedRun, which unwinds the command's frames -- running the destructors
// the real exit skips, so their leaks and faults are fuzzed as well -- back to the harness;
// anywhere else (libFuzzer's own exits) it exits as the real one does. This file includes no
// C library header, whose declaration of _Exit (noexcept) would clash with this one.
#include "fuzz_cli_exit.hpp"

#include <sys/syscall.h>

extern "C" long syscall(long number, ...);

namespace wtmap::fuzz {
bool inside_command = false;
}

extern "C" [[noreturn]] void _Exit(int status) {
  if (wtmap::fuzz::inside_command) throw wtmap::fuzz::FinishedRun{status};
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
