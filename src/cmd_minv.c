/* cmd_minv.c: mbd minv MODEL, the inverse mass matrix. */
#include "cli.h"

#include <stdlib.h>

/* H^-1 (mbd_mass_matrix_inverse), one JSON row per coordinate. */
int cmd_minv(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--q"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    double *q = malloc(sizeof(double) * ((size_t)nq + (size_t)nv * (size_t)nv)), *Hinv = q + nq;
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    if (!q || !work) {
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    } else if (!(rc = cli_positions(cmd, flags, "--q", model, q))) {
        int status = mbd_mass_matrix_inverse(model, work, q, Hinv);
        if (status) {
            rc = cli_fail_solve(cmd, "H^-1", model, mbd_work_failed_body(work), status);
        } else {
            printf("{\"Hinv\": [");
            for (int r = 0; r < nv; r++) {
                printf(r ? ", " : "");
                json_vector(stdout, Hinv + (size_t)r * nv, nv);
            }
            printf("]}\n");
        }
    }
    mbd_work_free(work);
    free(q);
    mbd_model_free(model);
    return rc;
}
