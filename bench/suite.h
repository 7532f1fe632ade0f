/* suite.h: what mbd-bench measures.
 *
 *   percall  every solver in every formulation, one call on one thread, on five model
 *            families over a list of body counts;
 *   phases   one RK4 step split into integrator, kinematics and solve (Ivanov 2017, Figs.
 *            1-2) on Cardan and revolute chains;
 *   batch    K states per OpenMP batch, one workspace per thread, over thread counts;
 *   robots   every solver and plugin, one call on one thread, on real robots (robots.c);
 *   robot-derivatives  every derivatives method on the same robots. */
#ifndef MBD_BENCH_SUITE_H
#define MBD_BENCH_SUITE_H

#include "harness.h"
#include "mbd.h"

#include <regex.h>

#define BENCH_MAX_LIST 64

typedef struct {
    int value[BENCH_MAX_LIST];
    int count;
} bench_list;

/* A family of models: a generator spec or model file, or a robot loaded once. */
typedef struct {
    const char *name;
    const char *spec; /* generator spec or model file; %d is the body count (the ladder's k) */
    unsigned suites;  /* the suites that use this family */
    int chain;        /* tree depth N: sparse's factorization is O(N^3) like dense's */
    int fixed_n;      /* > 0: one model, measured once with this n (a model file) */
    const mbd_model *model; /* a robot's, loaded once for every measurement; NULL: the
                               measurement loads spec */
} bench_family;

/* The robots of a list (bench/robots.txt): each as a family whose n is its nv. */
typedef struct bench_robot bench_robot;
typedef struct {
    bench_robot *robot;
    int count;
    json_t *listed;  /* [{name, path, base, nv}] of those loaded */
    json_t *skipped; /* [{name, path, error}] of those left out */
} bench_robots;

/* Reads the list at path and loads its robots; one that is missing or does not load is
 * left out with a line on stderr. Returns 0, or CLI_USAGE_ERROR after a message (a list
 * that cannot be read, a malformed line). */
int bench_robots_load(const char *path, bench_robots *robots);
const bench_family *bench_robot_family(const bench_robots *robots, int index);
void bench_robots_free(bench_robots *robots);

typedef struct {
    unsigned suites;            /* bit 1 << bench_suite for each suite to run */
    bench_list ns[SUITE_COUNT]; /* body counts of each suite */
    bench_list threads;         /* thread counts of the batch suite */
    int batch_k;                /* states per batch */
    int dense_max_n; /* dense, and sparse on chains (both O(N^3)), run up to this N only */
    unsigned long seed;
    timing_options timing;      /* cpu_clock is chosen per suite */
    int interleave;             /* repetition r of every measurement before r + 1 of any */
    const regex_t *filter;      /* only names that match; NULL: all */
    const bench_robots *robots; /* of the robot suites */
    int rank, ranks;            /* MPI: this rank makes the measurements of every ranks-th
                                   (suite, family, variant, n), all its instances (1, 0 alone) */
} bench_config;

/* {family name: generator spec (%d the body count)} of every family, for the context. */
json_t *bench_families_json(void);

/* Runs every selected measurement until done or bench_stop; prints each on stdout as it
 * finishes (interleaved: all at the end). Returns 0, or 1 if any measurement failed (the
 * others still run). */
int bench_run(const bench_config *config, bench_results *results);

#endif
