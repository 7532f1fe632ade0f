/* cmd_coeffs.c: mbd coeffs MODEL, H, C, g and C qd of the equations of motion. */
#include "cli.h"

#include <stdlib.h>

/* A matrix as rows: JSON (a list of rows, full precision) or text (one row a line, 12
 * digits). */
static void print_matrix(const char *key, const double *M, int n, int json, int last)
{
    printf(json ? "\"%s\": [" : "%s =\n", key);
    for (int r = 0; r < n; r++) {
        if (json) {
            printf(r ? ", " : "");
            json_vector(stdout, M + (size_t)r * n, n);
        } else {
            for (int c = 0; c < n; c++)
                printf(" % .12g", M[(size_t)r * n + c]);
            printf("\n");
        }
    }
    printf(json ? (last ? "]" : "], ") : "");
}

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
        if (status) {
            rc = cli_fail(cmd, "coefficients", status);
        } else {
            printf(json ? "{" : "");
            print_matrix("H", H, n, json, 0);
            print_matrix("C", C, n, json, 0);
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
