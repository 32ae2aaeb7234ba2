// wtmap core (internal): names for the threads wtmap starts, as `top -H`, `perf report --sort
// comm` and gdb show them (a profile of a run then splits by stage: mapping threads, the CPU
// pool, reader, inflater, writer). Linux keeps 15 bytes of a name. Only for threads wtmap starts:
// the main thread's name is the process's.
#pragma once

#include <thread>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace wtmap::detail {

// Names `t` from the thread that started it: named when this returns, whether or not `t` has
// run yet (a thread naming itself first thing may not have, when someone looks).
inline void name_thread(std::thread& t, const char* name) {
#if defined(__linux__)
  pthread_setname_np(t.native_handle(), name);
#else
  (void)t;
  (void)name;
#endif
}

}  // namespace wtmap::detail
