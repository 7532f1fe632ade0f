/* cmd_id.c: mbd id MODEL, the inverse dynamics: actuator torques and joint reactions. */
#include "cli.h"

#include <stdlib.h>

int cmd_id(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--q"), FLAG("--qd"), FLAG("--qdd"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model), nb = mbd_model_nbodies(model);
    double *q = malloc(sizeof(double) * ((size_t)nq + 3 * (size_t)nv + 6 * (size_t)nb));
    double *qd = q + nq, *qdd = qd + nv, *tau = qdd + nv, *reactions = tau + nv;
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    if (!q || !work)
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    else if (!(rc = cli_positions(cmd, flags, "--q", model, q)) &&
             !(rc = cli_vector(cmd, flags, "--qd", nv, qd)) &&
             !(rc = cli_vector(cmd, flags, "--qdd", nv, qdd))) {
        int status = mbd_inverse_dynamics(model, work, q, qd, qdd, tau, reactions);
        if (status && status != MBD_ENONFINITE) /* that one: tau overflowed, named below */
            rc = cli_fail(cmd, "inverse dynamics", status);
        else if (!(rc = cli_check_finite(cmd, "tau", tau, (size_t)nv)) &&
                 !(rc = cli_check_finite(cmd, "reactions", reactions, 6 * (size_t)nb))) {
            printf("{");
            json_key_vector(stdout, "tau", tau, nv, 0);
            printf("\"reactions\": [");
            for (int i = 0; i < nb; i++) {
                printf(i ? ", " : "");
                json_vector(stdout, reactions + 6 * i, 6);
            }
            printf("]}\n");
        }
    }
    mbd_work_free(work);
    free(q);
    mbd_model_free(model);
    return rc;
}
