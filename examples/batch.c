/* The README's batch example as a whole program: K random states of a Cardan chain
 * through mbd_batch_forward, each checked against the one-state mbd_forward. Built against
 * an installed mbdbench (make install; pkg-config mbd) by tests/test_install.c:
 *
 *     cc batch.c $(pkg-config --cflags --libs mbd) -o batch && ./batch
 */
#include <mbd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { K = 37 }; /* not a multiple of any SIMD width: the tail is handled too */

static double uniform(void) { return 2.0 * rand() / RAND_MAX - 1.0; }

int main(void)
{
    char err[256];
    mbd_model *model;
    mbd_model_load("chain:n=20,joint=cardan", NULL, &model, err, sizeof err);
    if (!model) {
        fprintf(stderr, "batch: %s\n", err);
        return 1;
    }
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    const mbd_solver *bodies = mbd_solver_find("bodies");
    double *q = malloc(sizeof(double) * K * nq), *qd = malloc(sizeof(double) * K * nv);
    double *tau = malloc(sizeof(double) * K * nv), *qdd = malloc(sizeof(double) * K * nv);
    double *one = malloc(sizeof(double) * nv);
    int status[K];
    mbd_batch *batch;
    mbd_batch_new(model, bodies, 0, 0, &batch); /* all threads, W from the CPU */
    mbd_work *work;
    mbd_work_new(model, bodies, &work);
    int rc = !q || !qd || !tau || !qdd || !one || !batch || !work;
    for (int k = 0; !rc && k < K * nq; k++)
        q[k] = uniform();
    for (int k = 0; !rc && k < K * nv; k++)
        qd[k] = uniform(), tau[k] = uniform();
    if (!rc)
        rc = mbd_batch_forward(model, batch, K, q, qd, tau, qdd, status);
    double worst = 0.0; /* each state's qdd against one state's */
    for (int k = 0; !rc && k < K; k++) {
        rc = mbd_forward(model, work, q + k * nq, qd + k * nv, tau + k * nv, one);
        for (int j = 0; j < nv; j++)
            worst = fmax(worst, fabs(qdd[k * nv + j] - one[j]) / (1.0 + fabs(one[j])));
    }
    if (!rc)
        printf("%d states of %s, %d lanes: worst relative difference from one state %.1e\n", K,
               mbd_model_name(model), mbd_batch_lanes(batch), worst);
    mbd_work_free(work);
    mbd_batch_free(batch);
    free(q), free(qd), free(tau), free(qdd), free(one);
    mbd_model_free(model);
    return rc == MBD_OK && worst <= 1e-12 ? 0 : 1;
}
