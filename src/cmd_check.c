/* cmd_check.c: mbd check, every solver (or one), formulation and integrator against the
 * golden trajectories of tests/golden (made by tests/golden/make_golden.sh; installed as
 * PREFIX/share/mbdbench/golden), and mbd check --cases, one solver against a reference-data
 * file (mbd cases).
 *
 * Every difference is relative in the max norm, |x - ref| / max(1, |ref|): states mix
 * angles, lengths and rates, and the floor keeps components near zero from dominating. */
#include "cli.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What each run is held to; the largest values measured in brackets. The golden files
 * are good to 1e-10 (see make_golden.sh). */
#define RK4_DT 1e-3
#define RK4_STATE_TOL 1e-4       /* [9e-6, rods10: O(dt^4) with a large constant] */
#define RK4_ENERGY_TOL 1e-6      /* [4e-8, chain5] */
#define ADAPTIVE_TOL 1e-10       /* rtol = atol of dopri5 and adams */
#define ADAPTIVE_STATE_TOL 1e-7  /* [3e-8, adams on rods10] */
#define ADAPTIVE_ENERGY_TOL 1e-7 /* [6e-9, adams on cardan4, momentum form] */
#define VS_DENSE_TOL 1e-10       /* one right-hand side against dense's [3e-13] */
#define CASES_TOL 1e-9           /* a reference-data file: each quantity [3e-12, chain:n=30] */

/* Where the golden data lies: golden/cases.txt and NAME.csv, and the tree (root) that the
 * model files of cases.txt are relative to. */
typedef struct {
    char root[PATH_MAX], golden[PATH_MAX + 16];
} data_dir;

typedef struct {
    char *name, *model, *q0, *qd0; /* point into line */
    double t1, sample;
    char *line;
} golden_case;

/* A golden file: the states (q, qd) at its sample times, and p = H(q) qd there. */
typedef struct {
    int rows, width; /* width = nq + nv */
    double *t, *x;   /* rows; rows x width */
    double *p;       /* rows x nv */
} golden;

typedef struct {
    const char *case_name, *solver;
    mbd_formulation formulation;
    mbd_integrator integrator;
    int status; /* mbd_simulate's */
    double state_error, energy_drift, vs_dense;
    long rhs_evals;
    int pass;
} result;

typedef struct {
    result *rows;
    int count, capacity;
} results;

static double max_abs(const double *x, int n)
{
    double m = 0.0;
    for (int k = 0; k < n; k++)
        m = fmax(m, fabs(x[k]));
    return m;
}

static double max_diff(const double *a, const double *b, int n)
{
    double m = 0.0;
    for (int k = 0; k < n; k++)
        m = fmax(m, fabs(a[k] - b[k]));
    return m;
}

/* ---- reading the cases and the golden files ---- */

/* Splits line into the six fields of a case; 0 on success. */
static int parse_case(char *line, golden_case *c)
{
    char *save, *field[7];
    int n = 0;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok && n < 7;
         tok = strtok_r(NULL, " \t\r\n", &save))
        field[n++] = tok;
    if (n != 6)
        return -1;
    char *end1, *end2;
    c->name = field[0], c->model = field[1], c->q0 = field[2], c->qd0 = field[3];
    c->t1 = strtod(field[4], &end1);
    c->sample = strtod(field[5], &end2);
    return *end1 || *end2 || !(c->t1 > 0.0) || !(c->sample > 0.0) ? -1 : 0;
}

/* The directory of the running executable (a checkout's root for ./mbd); "" if unknown. */
static void executable_dir(char *dir, size_t size)
{
    const ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    dir[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
}

/* Whether root holds golden data, in a checkout's layout (tests/golden) or an
 * installation's (share/mbdbench/golden); fills d if so. */
static int holds_golden(const char *root, data_dir *d)
{
    static const char *const layouts[] = {"tests/golden", "golden"};
    for (int k = 0; k < 2; k++) {
        char cases[PATH_MAX + 32];
        if (snprintf(cases, sizeof cases, "%s/%s/cases.txt", root, layouts[k]) <
                (int)sizeof cases &&
            access(cases, R_OK) == 0) /* a root too long for d is not one */
            return snprintf(d->root, sizeof d->root, "%s", root) < (int)sizeof d->root &&
                   snprintf(d->golden, sizeof d->golden, "%s/%s", root, layouts[k]) <
                       (int)sizeof d->golden;
    }
    return 0;
}

/* $MBD_DATA alone when set; else beside the executable (./mbd in a checkout, or one
 * directory up for build-asan/mbd), PREFIX/share/mbdbench for PREFIX/bin/mbd, and the
 * working directory. */
static int find_data(const char *cmd, data_dir *d)
{
    static const char *const beside[] = {"", "/..", "/../share/mbdbench"};
    const char *env = getenv("MBD_DATA");
    char exe[PATH_MAX], roots[4][PATH_MAX + 32];
    executable_dir(exe, sizeof exe);
    int n = 0;
    if (env)
        snprintf(roots[n++], sizeof roots[0], "%s", env);
    for (int k = 0; !env && exe[0] && k < 3; k++)
        snprintf(roots[n++], sizeof roots[0], "%s%s", exe, beside[k]);
    if (!env)
        snprintf(roots[n++], sizeof roots[0], ".");
    for (int k = 0; k < n; k++)
        if (holds_golden(roots[k], d))
            return 0;
    fprintf(stderr,
            "mbd %s: no golden data (tests/golden/cases.txt or golden/cases.txt) in %s%s"
            "; set MBD_DATA to a checkout or to PREFIX/share/mbdbench\n",
            cmd, env ? env : exe, env ? "" : ", beside it, its ../share/mbdbench or here");
    return CLI_USAGE_ERROR;
}

/* A model of cases.txt: a file relative to the data's root, or a generator spec. */
static void model_path(const data_dir *d, const char *model, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", d->root, model);
    if (access(path, F_OK) != 0)
        snprintf(path, size, "%s", model);
}

/* The cases of cases.txt, each owning its line; NULL (after a message) on error. */
static golden_case *read_cases(const char *cmd, const data_dir *d, int *count)
{
    char path[sizeof d->golden + 16];
    snprintf(path, sizeof path, "%s/cases.txt", d->golden);
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "mbd %s: %s: cannot read\n", cmd, path);
        return NULL;
    }
    golden_case *cases = NULL;
    char *line = NULL;
    size_t size = 0;
    int n = 0, lineno = 0, ok = 1;
    while (ok && getline(&line, &size, in) > 0) {
        lineno++;
        if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#')
            continue;
        golden_case *grown = realloc(cases, (size_t)(n + 1) * sizeof *cases);
        ok = grown != NULL;
        if (ok) {
            cases = grown;
            cases[n].line = line;
            ok = parse_case(line, &cases[n]) == 0;
            if (!ok)
                fprintf(stderr, "mbd %s: %s:%d: expected NAME MODEL Q0 QD0 T1 SAMPLE\n", cmd, path,
                        lineno);
            n++;
            line = NULL, size = 0;
        }
    }
    free(line);
    fclose(in);
    *count = n;
    if (ok && n == 0) {
        fprintf(stderr, "mbd %s: %s: no cases\n", cmd, path);
        ok = 0;
    }
    if (!ok) {
        for (int k = 0; k < n; k++)
            free(cases[k].line);
        free(cases);
        return NULL;
    }
    return cases;
}

/* Parses one CSV row of n numbers into out. */
static int parse_row(const char *line, double *out, int n)
{
    const char *p = line;
    for (int k = 0; k < n; k++) {
        char *end;
        out[k] = strtod(p, &end);
        if (end == p || (*end != ',' && k + 1 < n) || !isfinite(out[k]))
            return -1;
        p = end + 1;
    }
    return 0;
}

static int append_row(golden *g, const double *row)
{
    double *t = realloc(g->t, sizeof(double) * (size_t)(g->rows + 1));
    if (!t)
        return -1;
    g->t = t;
    double *x = realloc(g->x, sizeof(double) * (size_t)(g->rows + 1) * (size_t)g->width);
    if (!x)
        return -1;
    g->x = x;
    g->t[g->rows] = row[0];
    memcpy(x + (size_t)g->rows * (size_t)g->width, row + 1, sizeof(double) * (size_t)g->width);
    g->rows++;
    return 0;
}

/* golden/NAME.csv: t, q, qd, kinetic, potential, total per row. */
static int read_golden(const char *cmd, const data_dir *d, const golden_case *c, int nq, int nv,
                       golden *g)
{
    char path[sizeof d->golden + 80];
    snprintf(path, sizeof path, "%s/%.60s.csv", d->golden, c->name);
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "mbd %s: %s: cannot read (tests/golden/make_golden.sh makes it)\n", cmd,
                path);
        return CLI_RUNTIME_ERROR;
    }
    const int columns = 1 + nq + nv + 3;
    double *row = malloc(sizeof(double) * (size_t)columns);
    char *line = NULL;
    size_t size = 0;
    int ok = row && getline(&line, &size, in) > 0; /* the header */
    *g = (golden){.width = nq + nv};
    while (ok && getline(&line, &size, in) > 0)
        ok = parse_row(line, row, columns) == 0 && append_row(g, row) == 0;
    free(line);
    free(row);
    fclose(in);
    if (!ok || g->rows == 0) {
        fprintf(stderr, "mbd %s: %s: expected rows of %d numbers (t, q, qd, energies)\n", cmd, path,
                columns);
        return CLI_RUNTIME_ERROR;
    }
    return 0;
}

/* The golden momenta, by the dense solver. */
static int golden_momenta(const mbd_model *model, golden *g)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    mbd_work *work;
    mbd_work_new(model, mbd_solver_find("dense"), &work);
    g->p = malloc(sizeof(double) * (size_t)g->rows * (size_t)nv);
    int status = work && g->p ? MBD_OK : MBD_ENOMEM;
    for (int r = 0; status == MBD_OK && r < g->rows; r++) {
        const double *q = g->x + (size_t)r * (size_t)g->width;
        status = mbd_momentum(model, work, q, q + nq, g->p + (size_t)r * (size_t)nv);
    }
    mbd_work_free(work);
    return status;
}

/* ---- the checks ---- */

/* Compares each reported state with the golden row of the same time, in the variables
 * that the integrator advances and controls: (q, qd) or (q, p). In the momentum form qd
 * is H^-1 p, whose error cond(H) may amplify far beyond the tolerance (a hundredfold on
 * rods10, whose thin rods make H ill-conditioned). */
typedef struct {
    const golden *g;
    int nq, nv, momentum, row;
    double error;
} comparison;

static int compare_state(const mbd_sim_state *s, void *ctx)
{
    comparison *c = ctx;
    const golden *g = c->g;
    if (c->row >= g->rows || fabs(s->t - g->t[c->row]) > 1e-12 * fmax(1.0, s->t))
        return MBD_EINVAL; /* the golden file does not match its case: make_golden.sh */
    const double *q = g->x + (size_t)c->row * (size_t)g->width;
    const double *v = c->momentum ? g->p + (size_t)c->row * (size_t)c->nv : q + c->nq;
    const double diff =
        fmax(max_diff(s->q, q, c->nq), max_diff(c->momentum ? s->p : s->qd, v, c->nv));
    const double scale = fmax(1.0, fmax(max_abs(q, c->nq), max_abs(v, c->nv)));
    c->error = fmax(c->error, diff / scale);
    c->row++;
    return MBD_OK;
}

/* One right-hand side of solver at each golden state against the dense solver's: qdd, or
 * (qd, pd) from p = H qd. */
static double disagreement_with_dense(const mbd_model *model, const mbd_solver *solver,
                                      mbd_formulation form, const golden *g)
{
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    const int n = form == MBD_ACCELERATION ? nv : 2 * nv;
    mbd_work *work;
    mbd_work_new(model, solver, &work);
    mbd_work *ref_work;
    mbd_work_new(model, mbd_solver_find("dense"), &ref_work);
    double *p = malloc(sizeof(double) * 5 * (size_t)nv), *out = p + nv, *ref = out + 2 * nv;
    double worst = p && work && ref_work ? 0.0 : INFINITY;
    for (int r = 0; r < g->rows && isfinite(worst); r++) {
        const double *q = g->x + (size_t)r * (size_t)g->width, *qd = q + nq;
        int status;
        if (form == MBD_ACCELERATION)
            status = mbd_forward(model, work, q, qd, NULL, out) ||
                     mbd_forward(model, ref_work, q, qd, NULL, ref);
        else
            status = mbd_momentum(model, ref_work, q, qd, p) ||
                     mbd_forward_momentum(model, work, q, p, NULL, out, out + nv) ||
                     mbd_forward_momentum(model, ref_work, q, p, NULL, ref, ref + nv);
        worst = status ? INFINITY : fmax(worst, max_diff(out, ref, n) / fmax(1.0, max_abs(ref, n)));
    }
    free(p);
    mbd_work_free(ref_work);
    mbd_work_free(work);
    return worst;
}

static int within_tolerance(const result *r)
{
    const int rk4 = r->integrator == MBD_RK4;
    return r->status == MBD_OK && r->state_error <= (rk4 ? RK4_STATE_TOL : ADAPTIVE_STATE_TOL) &&
           r->energy_drift <= (rk4 ? RK4_ENERGY_TOL : ADAPTIVE_ENERGY_TOL) &&
           r->vs_dense <= VS_DENSE_TOL;
}

static void run_pair(const mbd_model *model, const golden_case *c, const golden *g,
                     const double *q0, result *r)
{
    const mbd_solver *solver = mbd_solver_find(r->solver);
    const mbd_sim_options opt = {.formulation = r->formulation,
                                 .integrator = r->integrator,
                                 .t1 = c->t1,
                                 .sample = c->sample,
                                 .dt = RK4_DT,
                                 .rtol = ADAPTIVE_TOL,
                                 .atol = ADAPTIVE_TOL};
    comparison cmp = {.g = g,
                      .nq = mbd_model_nq(model),
                      .nv = mbd_model_nv(model),
                      .momentum = r->formulation == MBD_MOMENTUM};
    mbd_sim_stats stats;
    r->status = mbd_simulate(model, solver, &opt, q0, q0 + cmp.nq, compare_state, &cmp, &stats);
    if (r->status == MBD_OK && cmp.row != g->rows)
        r->status = MBD_EINVAL; /* fewer samples than golden rows */
    r->state_error = cmp.error;
    r->energy_drift = stats.energy_drift;
    r->rhs_evals = stats.rhs_evals;
    r->pass = within_tolerance(r);
}

static result *add_result(results *all)
{
    if (all->count == all->capacity) {
        const int capacity = all->capacity ? 2 * all->capacity : 64;
        result *grown = realloc(all->rows, (size_t)capacity * sizeof *grown);
        if (!grown)
            return NULL;
        all->rows = grown, all->capacity = capacity;
    }
    return &all->rows[all->count++];
}

/* Every solver (or only the one), each formulation it offers, and every integrator on one
 * case. */
static int check_case(const char *cmd, const data_dir *d, const golden_case *c,
                      const mbd_solver *only, results *all)
{
    char path[sizeof d->root + 256];
    model_path(d, c->model, path, sizeof path);
    mbd_model *model = cli_load_model(cmd, path, NULL);
    if (!model)
        return CLI_RUNTIME_ERROR;
    const int nq = mbd_model_nq(model), nv = mbd_model_nv(model);
    char q0_name[80], qd0_name[80];
    snprintf(q0_name, sizeof q0_name, "%s Q0", c->name);
    snprintf(qd0_name, sizeof qd0_name, "%s QD0", c->name);
    const cli_flag lists[] = {{q0_name, c->q0, 0}, {qd0_name, c->qd0, 0}, {NULL, NULL, 0}};
    double *q0 = malloc(sizeof(double) * (size_t)(nq + nv));
    golden g = {0};
    int rc = !q0 ? cli_fail(cmd, "allocation", MBD_ENOMEM) : 0;
    if (!rc && !(rc = cli_vector(cmd, lists, q0_name, nq, q0)) &&
        !(rc = cli_vector(cmd, lists, qd0_name, nv, q0 + nq)))
        rc = read_golden(cmd, d, c, nq, nv, &g);
    if (!rc && golden_momenta(model, &g))
        rc = cli_fail(cmd, c->name, MBD_ENOMEM);
    static const mbd_formulation forms[] = {MBD_ACCELERATION, MBD_MOMENTUM};
    for (int s = 0; !rc && s < (only ? 1 : mbd_solver_count()); s++) {
        const mbd_solver *solver = only ? only : mbd_solver_at(s);
        for (int f = 0; !rc && f < 2; f++) {
            if (!(mbd_solver_formulations(solver) & forms[f]))
                continue;
            const double vs_dense = disagreement_with_dense(model, solver, forms[f], &g);
            for (int i = 0; !rc && i < MBD_INTEGRATOR_COUNT; i++) {
                result *r = add_result(all);
                if (!r) {
                    rc = cli_fail(cmd, "allocation", MBD_ENOMEM);
                    break;
                }
                *r = (result){.case_name = c->name,
                              .solver = mbd_solver_name(solver),
                              .formulation = forms[f],
                              .integrator = (mbd_integrator)i,
                              .vs_dense = vs_dense};
                run_pair(model, c, &g, q0, r);
            }
        }
    }
    free(g.t);
    free(g.x);
    free(g.p);
    free(q0);
    mbd_model_free(model);
    return rc;
}

/* ---- output ---- */

static const char *formulation_name(mbd_formulation f)
{
    return f == MBD_MOMENTUM ? "momentum" : "acceleration";
}

static void print_tolerances(FILE *out)
{
    fprintf(out,
            "tolerances (relative, max norm): rk4 at dt %g: state %g, energy drift %g; "
            "dopri5, adams at rtol = atol = %g: state %g, energy drift %g; "
            "one RHS against dense: %g\n",
            RK4_DT, RK4_STATE_TOL, RK4_ENERGY_TOL, ADAPTIVE_TOL, ADAPTIVE_STATE_TOL,
            ADAPTIVE_ENERGY_TOL, VS_DENSE_TOL);
}

static void print_table(const results *all)
{
    print_tolerances(stdout);
    printf("%-9s %-14s %-12s %-7s %11s %12s %10s %10s  %s\n", "case", "solver", "formulation",
           "integr.", "state err", "energy drift", "RHS evals", "vs dense", "ok");
    for (int k = 0; k < all->count; k++) {
        const result *r = &all->rows[k];
        printf("%-9s %-14s %-12s %-7s %11.2e %12.2e %10ld %10.2e  %s\n", r->case_name, r->solver,
               formulation_name(r->formulation), mbd_integrator_name(r->integrator), r->state_error,
               r->energy_drift, r->rhs_evals, r->vs_dense,
               r->pass     ? "yes"
               : r->status ? mbd_strerror(r->status)
                           : "NO");
    }
}

/* JSON has no Inf: a failed comparison is null. */
static void json_number(FILE *out, const char *key, double x, const char *sep)
{
    if (isfinite(x))
        fprintf(out, "\"%s\": %.6g%s", key, x, sep);
    else
        fprintf(out, "\"%s\": null%s", key, sep);
}

static int write_json(FILE *out, void *ctx)
{
    const results *all = ctx;
    fprintf(out,
            "{\"tolerances\": {\"rk4_dt\": %g, \"rk4_state\": %g, \"rk4_energy\": %g, "
            "\"adaptive_rtol_atol\": %g, \"adaptive_state\": %g, \"adaptive_energy\": %g, "
            "\"vs_dense\": %g},\n \"results\": [",
            RK4_DT, RK4_STATE_TOL, RK4_ENERGY_TOL, ADAPTIVE_TOL, ADAPTIVE_STATE_TOL,
            ADAPTIVE_ENERGY_TOL, VS_DENSE_TOL);
    for (int k = 0; k < all->count; k++) {
        const result *r = &all->rows[k];
        fprintf(out,
                "%s\n  {\"case\": \"%s\", \"solver\": \"%s\", \"formulation\": \"%s\", "
                "\"integrator\": \"%s\", \"status\": \"%s\", ",
                k ? "," : "", r->case_name, r->solver, formulation_name(r->formulation),
                mbd_integrator_name(r->integrator), mbd_strerror(r->status));
        json_number(out, "state_error", r->state_error, ", ");
        json_number(out, "energy_drift", r->energy_drift, ", ");
        fprintf(out, "\"rhs_evals\": %ld, ", r->rhs_evals);
        json_number(out, "vs_dense", r->vs_dense, ", ");
        fprintf(out, "\"pass\": %s}", r->pass ? "true" : "false");
    }
    fprintf(out, "\n]}\n");
    return ferror(out) ? -1 : 0;
}

/* ---- the command ---- */

/* Whether name is one of the comma-separated names in list (NULL: all are). */
static int listed(const char *list, const char *name)
{
    const size_t len = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return list == NULL;
}

/* Every name in --models must be a case. */
static int check_model_names(const char *cmd, const char *list, const golden_case *cases, int n)
{
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        const size_t len = strcspn(p, ",");
        int found = 0;
        for (int k = 0; k < n && !found; k++)
            found = strlen(cases[k].name) == len && strncmp(cases[k].name, p, len) == 0;
        if (!found) {
            fprintf(stderr, "mbd %s: --models: no golden case '%.*s' (cases:", cmd, (int)len, p);
            for (int k = 0; k < n; k++)
                fprintf(stderr, " %s", cases[k].name);
            fprintf(stderr, ")\n");
            return CLI_USAGE_ERROR;
        }
    }
    return 0;
}

/* The run furthest outside (or nearest to) its tolerances, and which measure that is. */
static void print_worst(FILE *out, const results *all)
{
    const result *worst = NULL;
    const char *measure = "";
    double ratio = -1.0, error = 0.0, tol = 0.0;
    for (int k = 0; k < all->count; k++) {
        const result *r = &all->rows[k];
        const int rk4 = r->integrator == MBD_RK4;
        const double errors[] = {r->status ? INFINITY : r->state_error, r->energy_drift,
                                 r->vs_dense};
        const double tols[] = {rk4 ? RK4_STATE_TOL : ADAPTIVE_STATE_TOL,
                               rk4 ? RK4_ENERGY_TOL : ADAPTIVE_ENERGY_TOL, VS_DENSE_TOL};
        static const char *const names[] = {"state error", "energy drift", "vs dense"};
        for (int m = 0; m < 3; m++)
            if (!(errors[m] / tols[m] <= ratio)) /* NaN counts as worst */
                worst = r, measure = names[m], ratio = errors[m] / tols[m], error = errors[m],
                tol = tols[m];
    }
    if (worst)
        fprintf(out, "worst: %s %.2e (tolerance %g) on %s, solver %s, %s, %s%s%s\n", measure, error,
                tol, worst->case_name, worst->solver, formulation_name(worst->formulation),
                mbd_integrator_name(worst->integrator), worst->status ? ": " : "",
                worst->status ? mbd_strerror(worst->status) : "");
}

/* The golden trajectories: every case (or --models), every solver (or only). */
static int check_golden(const char *cmd, const cli_flag *flags, const mbd_solver *only)
{
    data_dir d;
    int ncases, rc = find_data(cmd, &d);
    if (rc)
        return rc;
    golden_case *cases = read_cases(cmd, &d, &ncases);
    if (!cases)
        return CLI_RUNTIME_ERROR;
    const char *models = cli_get(flags, "--models"), *json = cli_get(flags, "--json");
    results all = {0};
    rc = check_model_names(cmd, models, cases, ncases);
    for (int k = 0; !rc && k < ncases; k++)
        if (listed(models, cases[k].name))
            rc = check_case(cmd, &d, &cases[k], only, &all);
    if (!rc) {
        print_table(&all);
        print_worst(stdout, &all);
        if (json)
            rc = cli_write_atomic(cmd, json, write_json, &all);
    }
    int failed = 0;
    for (int k = 0; k < all.count; k++)
        failed += !all.rows[k].pass;
    if (!rc && failed) {
        fprintf(stderr, "mbd %s: %d of %d runs outside tolerance; ", cmd, failed, all.count);
        print_worst(stderr, &all);
        rc = CLI_RUNTIME_ERROR;
    }
    free(all.rows);
    for (int k = 0; k < ncases; k++)
        free(cases[k].line);
    free(cases);
    return rc;
}

/* Where a component of a field lies: the coordinate's joint, a matrix's (H's, a
 * derivative's) row and column, the reaction's body. */
static void describe_component(const mbd_model *model, const mbd_cases_worst *w, char *out,
                               size_t size)
{
    const int nv = mbd_model_nv(model);
    if (strcmp(w->field, "reactions") == 0) {
        snprintf(out, size, "reactions[%d][%d] (body %s)", w->index / 6, w->index % 6,
                 mbd_model_body(model, w->index / 6)->name);
        return;
    }
    const int matrix = strcmp(w->field, "H") == 0 || strncmp(w->field, "dqdd_", 5) == 0;
    const int v = matrix ? w->index / nv : w->index;
    int body = 0;
    for (int first = 0; first + mbd_joint_type_nv(mbd_model_body(model, body)->joint) <= v; body++)
        first += mbd_joint_type_nv(mbd_model_body(model, body)->joint);
    if (matrix)
        snprintf(out, size, "%s[%d][%d] (row of joint %s)", w->field, v, w->index % nv,
                 mbd_model_joint_name(model, body));
    else
        snprintf(out, size, "%s[%d] (joint %s)", w->field, v, mbd_model_joint_name(model, body));
}

/* mbd check --cases FILE --solver S: exit 0 within CASES_TOL, 1 outside, 2 for bad input. */
static int check_cases_file(const char *cmd, const char *path, const mbd_solver *solver)
{
    char err[512];
    mbd_cases *cases;
    mbd_model *model = NULL;
    mbd_cases_worst worst;
    int status = mbd_cases_read(path, &cases, err, sizeof err);
    if (status == MBD_OK)
        status = mbd_cases_load_model(cases, &model, err, sizeof err);
    if (status == MBD_OK)
        status = mbd_cases_replay(cases, model, solver, &worst, err, sizeof err);
    int rc = 0;
    if (status != MBD_OK) {
        fprintf(stderr, "mbd %s: %s\n", cmd, err);
        rc = status == MBD_ENOMEM ? CLI_RUNTIME_ERROR : CLI_USAGE_ERROR;
    } else {
        char where[160];
        describe_component(model, &worst, where, sizeof where);
        const int pass = worst.error <= CASES_TOL;
        fprintf(pass ? stdout : stderr,
                "%s%s: %d cases, solver %s: %s; worst relative error %.2e (tolerance %g) at "
                "case %d, %s: %.17g, reference %.17g\n",
                pass ? "" : "mbd check: ", path, mbd_cases_count(cases), mbd_solver_name(solver),
                pass ? "pass" : "FAIL", worst.error, CASES_TOL, worst.case_index, where,
                worst.value, worst.reference);
        rc = pass ? 0 : CLI_RUNTIME_ERROR;
    }
    mbd_model_free(model);
    mbd_cases_free(cases);
    return rc;
}

int cmd_check(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {FLAG("--models"), OUTPUT("--json"), FLAG("--solver"), FLAG("--cases"),
                        END_FLAGS};
    const char *pos[1];
    int npos, rc = cli_parse(cmd, argc, argv, 2, flags, pos, 0, &npos);
    if (rc)
        return rc;
    const char *cases = cli_get(flags, "--cases");
    if (cases &&
        (!cli_get(flags, "--solver") || cli_get(flags, "--models") || cli_get(flags, "--json"))) {
        fprintf(stderr,
                "mbd %s: --cases: expected --cases FILE --solver S (and no --models "
                "or --json)\n",
                cmd);
        return CLI_USAGE_ERROR;
    }
    const mbd_solver *solver = cli_get(flags, "--solver") ? cli_solver(cmd, flags, NULL) : NULL;
    if (cli_get(flags, "--solver") && !solver)
        return CLI_USAGE_ERROR;
    return cases ? check_cases_file(cmd, cases, solver) : check_golden(cmd, flags, solver);
}
