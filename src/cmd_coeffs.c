/* cmd_coeffs.c: mbd coeffs MODEL, H, C, g and C qd of the equations of motion. */
#include "cli.h"

#include <stdlib.h>

static void print_vector(const char *key, const double *x, int n, int json, int last)
{
    if (json) {
        json_key_vector(stdout, key, x, n, last);
        return;
    }
    printf("%s =\n", key);
    for (int k = 0; k < n; k++)
        printf(" % .12g", x[k]);
    printf("\n");
}

int cmd_coeffs(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--q"), FLAG("--qd"), SWITCH("--json"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    const size_t nq = (size_t)mbd_model_nq(model), nv = (size_t)mbd_model_nv(model);
    double *q = malloc(sizeof(double) * (nq + 3 * nv + 2 * nv * nv));
    double *qd = q + nq, *g = qd + nv, *Cqd = g + nv, *H = Cqd + nv, *C = H + nv * nv;
    mbd_work *work;
    mbd_work_new(model, NULL, &work);
    const int json = cli_get(flags, "--json") != NULL, n = (int)nv;
    if (!q || !work) {
        rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
    } else if (!(rc = cli_positions(cmd, flags, "--q", model, q)) &&
               !(rc = cli_vector(cmd, flags, "--qd", n, qd))) {
        const int status = mbd_coefficients(model, work, q, qd, H, C, g, Cqd);
        if (status)
            rc = cli_fail(cmd, "coefficients", status);
        else if (!(rc = cli_check_finite(cmd, "H", H, nv * nv)) &&
                 !(rc = cli_check_finite(cmd, "C", C, nv * nv)) &&
                 !(rc = cli_check_finite(cmd, "g", g, nv)) &&
                 !(rc = cli_check_finite(cmd, "Cqd", Cqd, nv))) {
            printf(json ? "{" : "");
            cli_print_matrix("H", H, n, json, 0);
            cli_print_matrix("C", C, n, json, 0);
            print_vector("g", g, n, json, 0);
            print_vector("Cqd", Cqd, n, json, 1);
            printf(json ? "}\n" : "");
        }
    }
    mbd_work_free(work);
    free(q);
    mbd_model_free(model);
    return rc;
}
