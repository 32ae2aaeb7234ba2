// fuzz_cli: what the harness's _Exit throws inside a command (fuzz_cli_exit.cpp).
#pragma once

namespace wtmap::fuzz {

struct FinishedRun {
  int status;
};
extern bool inside_command;

}  // namespace wtmap::fuzz
