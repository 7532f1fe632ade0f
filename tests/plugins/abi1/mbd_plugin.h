/* mbd_plugin.h as ABI 1 published it (its table's struct, without ABI 2's
 * forward_derivatives), for building the plugins that tests/test_plugins.c loads as an
 * older plugin would be: the Makefile puts this directory before include/. */
#ifndef MBD_PLUGIN_H
#define MBD_PLUGIN_H

#include "mbd.h"

#define MBD_PLUGIN_ABI 1

typedef struct mbd_plugin_solver {
    int abi;
    const char *name;
    const char *summary;
    void *(*work_new)(const mbd_model *model);
    void (*work_free)(void *work);
    int (*forward)(const mbd_model *model, void *work, const double *q, const double *qd,
                   const double *tau, double *qdd);
} mbd_plugin_solver;

const mbd_plugin_solver *mbd_plugin_solvers(int *count);

#endif
