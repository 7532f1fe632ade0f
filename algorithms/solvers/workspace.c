/* workspace.c: the workspace of a model and solver: one block carved into the arrays of
 * MBD_WORK_ARRAYS, with the solver's scratch, the loops' and the friction iteration's;
 * and mbd_model_print, which makes one for the loops' rank. */
#include "solvers/solvers.h"

#include <stdlib.h>
#include <string.h>

/* Points w's arrays into base (NULL: only measures); returns the block's bytes. */
static size_t work_layout(mbd_work *w, const mbd_model *m, size_t scratch, size_t loop_scratch,
                          char *base)
{
    carved_block block = {.base = base};
#define CARVE_WORK_ARRAY(field, count) CARVE_ARRAY(&block, w, field, count);
    MBD_WORK_ARRAYS(CARVE_WORK_ARRAY, m, scratch, loop_scratch)
#undef CARVE_WORK_ARRAY
    return block.used;
}

int mbd_work_new(const mbd_model *model, const mbd_solver *solver, mbd_work **out)
{
    if (out)
        *out = NULL;
    if (!out || !model)
        return MBD_EINVAL;
    mbd_work *work = calloc(1, sizeof *work);
    if (!work)
        return MBD_ENOMEM;
    const size_t scratch = solver && solver->scratch_doubles ? solver->scratch_doubles(model) : 0;
    const size_t loop_scratch = loops_scratch_doubles(model, closes_loops_densely(solver));
    const size_t bytes = work_layout(work, model, scratch, loop_scratch, NULL);
    char *base = aligned_alloc(64, bytes);
    if (!base) {
        free(work);
        return MBD_ENOMEM;
    }
    memset(base, 0, bytes);
    work_layout(work, model, scratch, loop_scratch, base);
    constant_kinematics(model, work);
    work->block = base;
    work->model = model;
    work->solver = solver;
    work->failed_body = -1;
    if (solver && solver->plugin && !(work->plugin_work = solver->plugin->work_new(model))) {
        mbd_work_free(work);
        return MBD_ENOMEM;
    }
    *out = work;
    return MBD_OK;
}

void mbd_work_free(mbd_work *work)
{
    if (!work)
        return;
    if (work->plugin_work)
        work->solver->plugin->work_free(work->plugin_work);
    plugin_derivative_work_free(work);
    free(work->derivative_scratch);
    free(work->derivative_index);
    free(work->passive_scratch);
    free(work->block);
    free(work);
}

int mbd_work_failed_body(const mbd_work *work) { return work->failed_body; }

int mbd_work_friction_iterations(const mbd_work *work) { return work->friction_iterations; }

/* The rank of Phi_q at q = 0 (a workspace of no solver's), -1 if it cannot be had. */
static int loop_rank(const mbd_model *model)
{
    int rank = -1;
    double *q = calloc((size_t)model->nq, sizeof *q);
    mbd_work *work = NULL;
    if (!q || mbd_work_new(model, NULL, &work) != MBD_OK ||
        mbd_constraint_rank(model, work, q, &rank) != MBD_OK)
        rank = -1;
    mbd_work_free(work);
    free(q);
    return rank;
}

void mbd_model_print(const mbd_model *model, FILE *out)
{
    model_print(model, model->nloops ? loop_rank(model) : -1, out);
}
