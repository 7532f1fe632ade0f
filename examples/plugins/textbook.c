/* textbook.c: an example solver plugin (mbd_plugin.h), written against the public headers
 * alone: the textbook route H(q) qdd = tau - C(q, qd) (Featherstone, Rigid Body Dynamics
 * Algorithms, 2008, ch. 6), with H from mbd_mass_matrix, the bias C (Coriolis, centrifugal
 * and gravity forces) from inverse dynamics at qdd = 0, and a Cholesky factorization of
 * its own. O(N^3), as the built-in dense solver, which it should match to round-off.
 *
 *   cc -O2 -fPIC -shared -Iinclude examples/plugins/textbook.c -o textbook.so
 *   mbd fd chain:n=5 --plugin ./textbook.so --solver textbook
 */
#include "mbd_plugin.h"

#include <math.h>
#include <stdlib.h>

/* One thread's buffers: a workspace of the library for its dynamics quantities. */
typedef struct {
    mbd_work *work;
    int nv;
    double *H;    /* nv x nv, row-major; its Cholesky factor L in the lower triangle */
    double *bias; /* C(q, qd) */
    double *zero; /* qdd = 0 */
} textbook_work;

static void textbook_work_free(void *opaque)
{
    textbook_work *w = opaque;
    if (!w)
        return;
    mbd_work_free(w->work);
    free(w->H);
    free(w->bias);
    free(w->zero);
    free(w);
}

static void *textbook_work_new(const mbd_model *model)
{
    textbook_work *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    const size_t nv = (size_t)mbd_model_nv(model);
    w->nv = (int)nv;
    w->H = malloc(nv * nv * sizeof *w->H + 1);
    w->bias = malloc(nv * sizeof *w->bias + 1);
    w->zero = calloc(nv + 1, sizeof *w->zero);
    if (!w->H || !w->bias || !w->zero || mbd_work_new(model, NULL, &w->work) != MBD_OK) {
        textbook_work_free(w);
        return NULL;
    }
    return w;
}

/* H = L L^T into H's lower triangle; 0, or -1 where a pivot is not positive. */
static int cholesky(double *H, int n)
{
    for (int j = 0; j < n; j++) {
        double d = H[j * n + j];
        for (int k = 0; k < j; k++)
            d -= H[j * n + k] * H[j * n + k];
        if (!(d > 0.0))
            return -1;
        const double ljj = sqrt(d);
        H[j * n + j] = ljj;
        for (int i = j + 1; i < n; i++) {
            double s = H[i * n + j];
            for (int k = 0; k < j; k++)
                s -= H[i * n + k] * H[j * n + k];
            H[i * n + j] = s / ljj;
        }
    }
    return 0;
}

/* x <- (L L^T)^-1 x by forward and back substitution. */
static void cholesky_solve(const double *L, int n, double *x)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++)
            x[i] -= L[i * n + k] * x[k];
        x[i] /= L[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        for (int k = i + 1; k < n; k++)
            x[i] -= L[k * n + i] * x[k];
        x[i] /= L[i * n + i];
    }
}

static int textbook_forward(const mbd_model *model, void *opaque, const double *q, const double *qd,
                            const double *tau, double *qdd)
{
    textbook_work *w = opaque;
    int status = mbd_mass_matrix(model, w->work, q, w->H);
    if (status == MBD_OK)
        status = mbd_inverse_dynamics(model, w->work, q, qd, w->zero, w->bias, NULL);
    if (status != MBD_OK)
        return status;
    if (cholesky(w->H, w->nv))
        return MBD_ESINGULAR;
    for (int i = 0; i < w->nv; i++)
        qdd[i] = (tau ? tau[i] : 0.0) - w->bias[i];
    cholesky_solve(w->H, w->nv, qdd);
    return MBD_OK;
}

static const mbd_plugin_solver solvers[] = {{
    .abi = MBD_PLUGIN_ABI,
    .name = "textbook",
    .summary = "plugin: H qdd = tau - C, H by mbd_mass_matrix, C by inverse dynamics, Cholesky",
    .work_new = textbook_work_new,
    .work_free = textbook_work_free,
    .forward = textbook_forward,
}};

const mbd_plugin_solver *mbd_plugin_solvers(int *count)
{
    *count = (int)(sizeof solvers / sizeof solvers[0]);
    return solvers;
}
