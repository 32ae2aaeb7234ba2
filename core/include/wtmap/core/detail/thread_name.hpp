// wtmap core (internal): names for the threads wtmap starts, as `top -H`, `perf report --sort
// comm` and gdb show them (a profile of a run then splits by stage: mapping threads, the CPU
// pool, reader, inflater, writer). Linux keeps 15 bytes of a name. Never for the main thread,
// whose name is the process's.
#pragma once

#include <thread>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace wtmap::detail {

// From inside the thread, first thing.
inline void name_this_thread(const char* name) {
#if defined(__linux__)
  pthread_setname_np(pthread_self(), name);  // a hint: on failure the thread keeps the process's name
#else
  (void)name;
#endif
}

// From the thread that started `t`: named when this returns (before `t` may have run at all).
inline void name_thread(std::thread& t, const char* name) {
#if defined(__linux__)
  pthread_setname_np(t.native_handle(), name);
#else
  (void)t;
  (void)name;
#endif
}

}  // namespace wtmap::detail
