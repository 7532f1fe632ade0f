/* ranks.h: mbd-bench over MPI ranks (src/par.h); see bench/README.md. */
#ifndef MBD_BENCH_RANKS_H
#define MBD_BENCH_RANKS_H

#include <jansson.h>

/* Collective: takes this rank's JSON rows; rank 0 gets every rank's, in rank order, with
 * Google Benchmark's family and instance indices renumbered over all of them; the other
 * ranks (and a failure, reported) get NULL. */
json_t *bench_gather_rows(json_t *rows);

#endif
