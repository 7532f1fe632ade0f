/* solvers.c: the solver table, the built-in solvers and then the plugins' (plugin.c). */
#include "solvers/solvers.h"

#include <string.h>

static const mbd_solver *const solver_table[] = {
    &mbd_solver_dense,        &mbd_solver_bodies, &mbd_solver_poisson_sweep,
    &mbd_solver_poisson_ldlt, &mbd_solver_sparse,
};

#define SOLVER_COUNT ((int)(sizeof solver_table / sizeof solver_table[0]))

int mbd_solver_count(void) { return SOLVER_COUNT + plugin_solver_count(); }

const mbd_solver *mbd_solver_at(int index)
{
    return index >= 0 && index < SOLVER_COUNT ? solver_table[index]
                                              : plugin_solver_at(index - SOLVER_COUNT);
}

const mbd_solver *mbd_solver_find(const char *name)
{
    for (int k = 0; k < mbd_solver_count(); k++)
        if (strcmp(mbd_solver_at(k)->name, name) == 0)
            return mbd_solver_at(k);
    return NULL;
}

const char *mbd_solver_name(const mbd_solver *solver) { return solver->name; }
const char *mbd_solver_summary(const mbd_solver *solver) { return solver->summary; }

unsigned mbd_solver_formulations(const mbd_solver *solver) { return solver->forms; }
