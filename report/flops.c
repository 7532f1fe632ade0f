/* flops.c SPEC VARIANT [SPEC VARIANT ...]: for each pair, one random state of the model
 * SPEC and one forward call of VARIANT (a solver name, "-momentum" appended for a two-form
 * solver's momentum form, as mbd-bench names them), counted alone under Valgrind's
 * callgrind: statistics are zeroed after a first, uncounted call (model loading, setup and
 * first-call effects stay out) and dumped after the second, one dump per pair in the
 * order given. report/flops.sh weighs the dumps' instructions. Natively the client
 * requests do nothing. */
#include "mbd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#define MOMENTUM_SUFFIX "-momentum"

static const mbd_solver *find_variant(const char *variant, int *momentum)
{
    const size_t n = strlen(variant), k = strlen(MOMENTUM_SUFFIX);
    char name[64];
    *momentum = n > k && strcmp(variant + n - k, MOMENTUM_SUFFIX) == 0;
    snprintf(name, sizeof name, "%.*s", (int)(*momentum ? n - k : n), variant);
    const mbd_solver *solver = mbd_solver_find(name);
    if (solver && !*momentum)
        *momentum = mbd_solver_formulations(solver) == MBD_MOMENTUM;
    return solver;
}

static int call(const mbd_model *model, mbd_work *work, int momentum, const double *x, double *y)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    const double *q = x, *qd = q + nq, *tau = qd + nv;
    return momentum ? mbd_forward_momentum(model, work, q, qd, tau, y, y + nv)
                    : mbd_forward(model, work, q, qd, tau, y);
}

/* The counted call of one pair; 0 or 1 after printing why. */
static int count_pair(const char *spec, const char *variant)
{
    char err[512];
    int momentum, status = MBD_OK;
    mbd_model *model;
    mbd_model_load(spec, NULL, &model, err, sizeof err);
    const mbd_solver *solver = find_variant(variant, &momentum);
    if (!model || !solver) {
        fprintf(stderr, "flops: %s\n", !model ? err : "unknown variant");
        mbd_model_free(model);
        return 1;
    }
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *x = calloc((size_t)(nq + 4 * nv), sizeof *x);
    unsigned long long seed = 88172645463325252ULL;
    for (int i = 0; i < nq + 2 * nv; i++) { /* xorshift64, uniform in [-1, 1) */
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        x[i] = (double)(seed >> 11) * 0x1.0p-52 - 1.0;
    }
    mbd_work *work;
    mbd_work_new(model, solver, &work);
    status = call(model, work, momentum, x, x + nq + 2 * nv);
    CALLGRIND_ZERO_STATS;
    if (!status)
        status = call(model, work, momentum, x, x + nq + 2 * nv);
    CALLGRIND_DUMP_STATS;
    if (status)
        fprintf(stderr, "flops: %s %s: %s\n", spec, variant, mbd_strerror(status));
    mbd_work_free(work);
    mbd_model_free(model);
    free(x);
    return status != MBD_OK;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc % 2 == 0) {
        fprintf(stderr, "usage: flops SPEC VARIANT [SPEC VARIANT ...]\n");
        return 2;
    }
    int failed = 0;
    for (int a = 1; a + 1 < argc; a += 2)
        failed |= count_pair(argv[a], argv[a + 1]);
    return failed;
}
