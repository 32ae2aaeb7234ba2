// The program's settings for jemalloc (built with WTMAP_JEMALLOC, cli/CMakeLists.txt). jemalloc
// reads this string when it starts, before the MALLOC_CONF environment variable, whose settings
// stand over these (jemalloc(3), "TUNING"): a user can still turn each one off.
//
// thp:always -- jemalloc's extents in transparent huge pages (it asks with madvise, which the
// kernel's `madvise` mode, the GPU hosts', honours): a gapped run then faults in 2 MiB pages
// instead of 4 KiB ones. H200 host, E. coli, -t 16, three alternated runs each, the same records:
// single end (5*10^5 reads of 150 bases) 0.95-1.00 s against 1.03-1.06 s, minor faults 5.5*10^4
// against 2.8*10^5, system time 1.05 s against 1.37 s; pairs (5*10^5) CPU time 13.2 s against
// 14.1 s, wall within the runs' noise (1.66-2.05 s against 1.74-2.06 s); peak memory 10 % higher
// (2.44 GB against 2.21 GB single end). metadata_thp:auto: its own tables too once they grow.
#include <jemalloc/jemalloc.h>  // declares malloc_conf

const char* malloc_conf = "thp:always,metadata_thp:auto";
