/* peer_mujoco_check.c: peer-mujoco check MODEL, MuJoCo's qacc, H and bias forces against
 * ours (see peer_mujoco.c for the options). */
#include "peer_mujoco.h"

#include "../src/cli.h"
#include "../src/workload.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include <lapacke.h>

#define CHECK_CMD "peer-mujoco check" /* messages read "mbd peer-mujoco check: ..." */
#define CHECK_TOLERANCE 1e-10

/* Two backward-stable solvers can promise each other a forward error of about
 * eps cond(H) only, and chains of hundreds of links reach cond(H) ~ 1e9. So the qdd of
 * each solver must agree with MuJoCo's qacc to max(CHECK_TOLERANCE, CONDITIONING_SLACK
 * cond(H)); and the two sides of the equations of motion, which no solve blurs, to
 * CHECK_TOLERANCE: H entry by entry relative to sqrt(H_ii H_jj) (a bound on |H_ij|), and
 * the bias forces C (velocity terms and gravity) in the same scaling, relative to the
 * largest force of the equation (C or tau; C vanishes in some states). Together they pin
 * down the dynamics: qdd = H^-1 (tau - C). */
#define CONDITIONING_SLACK (4 * DBL_EPSILON)

typedef struct {
    double forward[MAX_VARIANTS]; /* max ||qacc - qdd|| / ||qdd||, per variant */
    double mass;                  /* max |H_mj - H|_ij / sqrt(H_ii H_jj) */
    double bias;      /* max ||D^-1/2 (C_mj - C)||_inf / max(||D^-1/2 C||_inf, ||D^-1/2 tau||_inf),
                         D = diag(H) */
    double path;      /* max relative difference of the staged path from mj_forward */
    double cond;      /* max cond_2(H) */
    int failed;       /* forward errors above their tolerance */
    double tolerance; /* CHECK_TOLERANCE unless --tolerance says otherwise */
} check_stats;

typedef struct {
    const mbd_model *model;
    peer *p;
    mbd_work *aux;                                     /* inverse dynamics and H */
    double *H;                                         /* nv x nv, ours */
    double *H_mj;                                      /* nv x nv, MuJoCo's, in its order */
    double *H_ours;                                    /* nv x nv, MuJoCo's in our coordinates */
    double *qacc, *path, *bias, *zero, *eig, *bias_mj; /* nv each; bias_mj ours, from MuJoCo */
} checker;

static void checker_free(checker *c)
{
    mbd_work_free(c->aux);
    free(c->H);
    free(c->qacc);
}

static int checker_init(checker *c, const mbd_model *model, peer *p)
{
    const size_t nv = (size_t)p->nv;
    *c = (checker){.model = model, .p = p};
    mbd_work_new(model, NULL, &c->aux);
    c->H = malloc(3 * nv * nv * sizeof *c->H);
    c->qacc = calloc(6 * nv, sizeof *c->qacc);
    if (!c->aux || !c->H || !c->qacc) {
        checker_free(c);
        return MBD_ENOMEM;
    }
    c->H_mj = c->H + nv * nv;
    c->H_ours = c->H_mj + nv * nv;
    c->path = c->qacc + nv;
    c->bias = c->path + nv;
    c->zero = c->bias + nv;
    c->eig = c->zero + nv;
    c->bias_mj = c->eig + nv;
    return MBD_OK;
}

static double relative_difference(const double *a, const double *b, int n)
{
    double diff = 0, norm = 0;
    for (int k = 0; k < n; k++) {
        diff += (a[k] - b[k]) * (a[k] - b[k]);
        norm += b[k] * b[k];
    }
    return sqrt(diff) / fmax(sqrt(norm), 1e-300);
}

/* MuJoCo's qacc by mj_forward into c->qacc (leaving its qM and qfrc_bias for this state),
 * then by the staged path into c->path. */
static void mujoco_qacc(checker *c, const double *q, const double *qd, const double *tau)
{
    peer_set_state(c->p, c->model, q, qd, tau);
    mj_forward(c->p->m, c->p->d);
    peer_gather(c->p, c->p->d->qacc, c->qacc);
    free_joint_accelerations(c->p, c->qacc);
    peer_forward_path(c->p);
    peer_gather(c->p, c->p->d->qacc, c->path);
    free_joint_accelerations(c->p, c->path);
}

/* H and C of both sides after mujoco_qacc, into stats; cond_2(H) of this state. */
static int compare_terms(checker *c, const double *q, const double *qd, const double *tau,
                         check_stats *stats, double *cond)
{
    const int nv = c->p->nv;
    const int *dof = c->p->dof_of;
    int status = mbd_mass_matrix(c->model, c->aux, q, c->H);
    if (status == MBD_OK)
        status = mbd_inverse_dynamics(c->model, c->aux, q, qd, c->zero, c->bias, NULL);
    if (status != MBD_OK)
        return status;
    mj_fullM(c->p->m, c->p->d, c->H_mj);
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++)
            c->H_ours[(size_t)i * nv + j] = c->H_mj[(size_t)dof[i] * nv + dof[j]];
    /* the bias less the passive forces, as our inverse dynamics at qdd = 0 */
    mju_subFrom(c->p->d->qfrc_bias, c->p->d->qfrc_passive, c->p->m->nv);
    peer_gather(c->p, c->p->d->qfrc_bias, c->bias_mj);
    free_joint_terms(c->p, c->H_ours, c->bias_mj);
    double mass = 0, bias_diff = 0, bias_size = 0;
    for (int i = 0; i < nv; i++) {
        const double hii = c->H[(size_t)i * nv + i];
        for (int j = 0; j < nv; j++) {
            const double diff = c->H_ours[(size_t)i * nv + j] - c->H[(size_t)i * nv + j];
            mass = fmax(mass, fabs(diff) / sqrt(hii * c->H[(size_t)j * nv + j]));
        }
        bias_diff = fmax(bias_diff, fabs(c->bias_mj[i] - c->bias[i]) / sqrt(hii));
        bias_size = fmax(bias_size, fmax(fabs(c->bias[i]), fabs(tau[i])) / sqrt(hii));
    }
    if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'L', nv, c->H, nv, c->eig) != 0)
        return MBD_ESINGULAR;
    stats->mass = fmax(stats->mass, mass);
    stats->bias = fmax(stats->bias, bias_diff / fmax(bias_size, 1e-300));
    *cond = c->eig[nv - 1] / c->eig[0];
    stats->cond = fmax(stats->cond, *cond);
    return MBD_OK;
}

/* Every state against every variant's workload (all drew the same states). */
static int check_states(checker *c, workload *ws, int nworkloads, check_stats *stats)
{
    const int nq = c->p->nq, nv = c->p->nv;
    for (int s = 0; s < ws[0].nstates; s++) {
        const double *q = ws[0].q + (size_t)s * nq, *qd = ws[0].v + (size_t)s * nv;
        const double *tau = ws[0].tau + (size_t)s * nv;
        mujoco_qacc(c, q, qd, tau);
        stats->path = fmax(stats->path, relative_difference(c->path, c->qacc, nv));
        double cond;
        int status = compare_terms(c, q, qd, tau, stats, &cond);
        for (int v = 0; v < nworkloads && status == MBD_OK; v++) {
            if ((status = workload_eval(&ws[v], ws[v].works[0], s)) != MBD_OK)
                break;
            const double error = relative_difference(c->qacc, ws[v].out + (size_t)s * nv, nv);
            stats->forward[v] = fmax(stats->forward[v], error);
            stats->failed += error > fmax(stats->tolerance, CONDITIONING_SLACK * cond);
        }
        if (status != MBD_OK)
            return status;
    }
    return MBD_OK;
}

static void print_check(const char *spec, const mbd_model *model, const workload *ws,
                        int nworkloads, const check_stats *stats)
{
    printf("%s: %d bodies, nv %d, %d states: forward error", spec, mbd_model_nbodies(model),
           mbd_model_nv(model), ws[0].nstates);
    for (int v = 0; v < nworkloads; v++)
        printf(" %s %.1e", ws[v].variant.name, stats->forward[v]);
    printf(" (cond(H) %.1e); H %.1e, C %.1e; staged path %.1e\n", stats->cond, stats->mass,
           stats->bias, stats->path);
    fflush(stdout); /* before a verdict on stderr */
}

/* The verdict on stderr, one line; returns the exit status. */
static int judge(const char *cmd, const char *spec, const check_stats *stats)
{
    const struct {
        const char *what;
        double error;
    } terms[] = {{"H", stats->mass}, {"C", stats->bias}, {"staged path", stats->path}};
    if (stats->failed) {
        fprintf(stderr, "mbd %s: %s: qdd differs by more than max(%.0e, 4 eps cond(H)) %d times\n",
                cmd, spec, stats->tolerance, stats->failed);
        return CLI_RUNTIME_ERROR;
    }
    for (size_t k = 0; k < sizeof terms / sizeof terms[0]; k++)
        if (!(terms[k].error <= stats->tolerance)) {
            fprintf(stderr, "mbd %s: %s: %s differs by %.2e, above %.0e\n", cmd, spec,
                    terms[k].what, terms[k].error, stats->tolerance);
            return CLI_RUNTIME_ERROR;
        }
    return 0;
}

/* One workload per acceleration variant, all from the same seed; returns how many. */
static int acceleration_workloads(const mbd_model *model, int nstates, unsigned long seed,
                                  workload *ws, int *status)
{
    workload_variant variants[MAX_VARIANTS];
    const int count = workload_variants(variants, MAX_VARIANTS);
    int n = 0;
    *status = MBD_OK;
    for (int k = 0; k < count && *status == MBD_OK; k++)
        if (variants[k].form == MBD_ACCELERATION &&
            (*status = workload_init(&ws[n], model, &variants[k], nstates, 1, seed)) == MBD_OK)
            n++;
    return n;
}

/* What `peer-mujoco check` was asked. */
typedef struct {
    const char *direct; /* --direct: the file MuJoCo reads itself, else NULL */
    double tolerance;
    int nstates;
    unsigned long seed;
} check_options;

static int run_check(const char *cmd, const mbd_model *model, const char *spec,
                     const check_options *options)
{
    peer p;
    char err[1024];
    if (peer_open(model, options->direct, &p, err, sizeof err) < 0) {
        fprintf(stderr, "mbd %s: %s: %s\n", cmd, spec, err);
        return CLI_RUNTIME_ERROR;
    }
    workload ws[MAX_VARIANTS];
    checker c;
    check_stats stats = {.tolerance = options->tolerance};
    int status;
    const int n = acceleration_workloads(model, options->nstates, options->seed, ws, &status);
    if (status == MBD_OK && (status = checker_init(&c, model, &p)) == MBD_OK) {
        status = check_states(&c, ws, n, &stats);
        checker_free(&c);
    }
    int rc = status != MBD_OK ? cli_fail(cmd, spec, status) : 0;
    if (!rc) {
        print_check(spec, model, ws, n, &stats);
        rc = judge(cmd, spec, &stats);
    }
    for (int v = 0; v < n; v++)
        workload_free(&ws[v]);
    peer_close(&p);
    return rc;
}

int peer_check_main(int argc, char **argv)
{
    cli_flag flags[] = {{"--states", NULL, 0}, {"--seed", NULL, 0}, {"--tolerance", NULL, 0},
                        SWITCH("--direct"),    CLI_FLOATING_BASE,   {NULL, NULL, 0}};
    const char *spec[1];
    double states, seed, tolerance;
    int npos, rc = cli_parse(CHECK_CMD, argc, argv, 2, flags, spec, 1, &npos);
    if (!rc && npos != 1)
        return peer_usage();
    if (rc || (rc = cli_number(CHECK_CMD, flags, "--states", 1, 1e6, 20, &states)) ||
        (rc = cli_number(CHECK_CMD, flags, "--seed", 0, 1e15, DEFAULT_SEED, &seed)) ||
        (rc = cli_number(CHECK_CMD, flags, "--tolerance", 1e-16, 1, CHECK_TOLERANCE, &tolerance)))
        return rc;
    mbd_model *model = cli_load_model(CHECK_CMD, spec[0], flags);
    if (!model)
        return CLI_USAGE_ERROR;
    const check_options options = {cli_get(flags, "--direct") ? spec[0] : NULL, tolerance,
                                   (int)states, (unsigned long)seed};
    rc = run_check(CHECK_CMD, model, spec[0], &options);
    mbd_model_free(model);
    return rc;
}
