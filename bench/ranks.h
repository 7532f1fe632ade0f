/* ranks.h: mbd-bench over MPI ranks (src/par.h); see bench/README.md. */
#ifndef MBD_BENCH_RANKS_H
#define MBD_BENCH_RANKS_H

#include <jansson.h>

#include "harness.h"

/* Collective: rank 0 gets the JSON rows of every rank's results (each row with its rank's
 * host), in the order of one process's run (bench_record's group), with Google Benchmark's
 * family and instance indices numbered as one process numbers them; the other ranks
 * (and a failure, reported) get NULL. */
json_t *bench_gather_rows(const bench_results *results, const char *host);

#endif
