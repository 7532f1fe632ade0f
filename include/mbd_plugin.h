/* mbd_plugin.h: the interface of solver plugins, shared libraries that add solvers to
 * mbdbench at run time (docs/plugins.md).
 *
 * A plugin is built against mbd.h and this header alone and links nothing of mbdbench:
 * the functions of mbd.h that it calls resolve in the process that loads it (mbd,
 * mbd-bench, the Python package, or a program that calls mbd_plugin_load). It runs in
 * that process: a plugin that crashes takes its host with it.
 *
 * The library calls a plugin solver as it calls its own: mbd_work_new calls work_new
 * once per workspace (so once per thread of a batch), mbd_forward calls forward with that
 * work, after checking the inputs, and checks its qdd (a NaN or Inf is MBD_ENONFINITE);
 * a batch calls forward one state at a time over its threads. A plugin solver offers the
 * acceleration form on models without joint friction (MBD_EUNSUPPORTED on others); it
 * does not close loops (a model with loops: forward solves the open tree, as mbd_forward).
 */
#ifndef MBD_PLUGIN_H
#define MBD_PLUGIN_H

#include "mbd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: forward_derivatives added at the end of mbd_plugin_solver. A table built with ABI 1's
 * header (no such field, a shorter struct) still loads, read as that shorter struct. */
#define MBD_PLUGIN_ABI 2

/* The longest solver name and summary a plugin may give (bytes, without the NUL). */
#define MBD_PLUGIN_MAX_NAME 40
#define MBD_PLUGIN_MAX_SUMMARY 200
/* The most solvers one plugin may export. */
#define MBD_PLUGIN_MAX_SOLVERS 64

typedef struct mbd_plugin_solver {
    int abi;             /* MBD_PLUGIN_ABI of the header the plugin was built with */
    const char *name;    /* unique among all solvers: letters, digits, '-', '_', '.';
                          * not starting with '-', not ending in -momentum or -simd */
    const char *summary; /* one line, for `mbd solvers` */
    /* Per-thread scratch for this model; NULL: out of memory (MBD_ENOMEM). */
    void *(*work_new)(const mbd_model *model);
    void (*work_free)(void *work);
    /* qdd = H(q)^-1 (tau - C(q, qd)), tau NULL meaning zero: MBD_OK or another mbd
     * status. q, qd and tau are finite; forward may use work only. */
    int (*forward)(const mbd_model *model, void *work, const double *q, const double *qd,
                   const double *tau, double *qdd);
    /* ABI 2, optional (NULL: none): dqdd/dq, dqdd/dqd and dqdd/dtau at (q, qd, tau) as
     * mbd_forward_derivatives defines them (nv x nv, row-major, q's columns along the
     * tangent step q (+) delta of mbd_integrate_positions), any of them NULL; with a work
     * of work_new and the inputs checked as for forward. A solver that has it is also a
     * derivatives method of its name (mbd_derivatives_method_find). */
    int (*forward_derivatives)(const mbd_model *model, void *work, const double *q,
                               const double *qd, const double *tau, double *dqdd_dq,
                               double *dqdd_dqd, double *dqdd_dtau);
} mbd_plugin_solver;

/* Exported by the plugin library: its solvers, *count of them (1 to
 * MBD_PLUGIN_MAX_SOLVERS). The table must live as long as the library. */
const mbd_plugin_solver *mbd_plugin_solvers(int *count);

/* Loads the plugin library at path and appends its solvers to the table that
 * mbd_solver_count, mbd_solver_at and mbd_solver_find walk, after the built-in ones, and
 * those with forward_derivatives to the derivatives methods' table likewise.
 * Every entry is checked first: on any fault nothing is added, the library is closed,
 * and err (if err_size > 0) holds one line naming the file and the fault. Returns MBD_OK,
 * MBD_EIO (a file that cannot be loaded, or has no mbd_plugin_solvers), MBD_EINVAL (a
 * faulty table: count, ABI (1 or 2, one for the whole table), name, summary, a NULL
 * function; a name already taken by a solver or a derivatives method) or
 * MBD_ENOMEM. Not thread-safe: load plugins before other threads use the solver table.
 * A plugin stays loaded until the process ends. */
int mbd_plugin_load(const char *path, char *err, size_t err_size);

/* Whether the solver came from a plugin; its file (else NULL). */
const char *mbd_solver_plugin_path(const mbd_solver *solver);

#ifdef __cplusplus
}
#endif
#endif
