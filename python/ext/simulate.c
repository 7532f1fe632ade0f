/* simulate.c: Model._simulate and Model._simulate_ensemble, the library's integrators
 * (mbd_simulate, mbd_simulate_ensemble) into numpy arrays, without the GIL. The package
 * (mbdbench/__init__.py) checks the options as the CLI does and calls these. */
#include "ext.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The most steps (t1 / dt) or reported states (t1 / sample) a simulation may take, as the
 * CLI's (src/cmd_simulate.c): a dt of 1e-300 is a mistake to refuse, not to run forever. */
#define MAX_STEPS 1e9

/* Rows that grow as the integrator reports states; width doubles per row. */
typedef struct {
    size_t width, count, capacity;
    double *rows;
} row_buffer;

static double *next_row(row_buffer *b)
{
    if (b->count == b->capacity) {
        const size_t capacity = b->capacity ? 2 * b->capacity : 256;
        double *rows = realloc(b->rows, capacity * b->width * sizeof *rows);
        if (!rows)
            return NULL;
        b->rows = rows, b->capacity = capacity;
    }
    return b->rows + b->width * b->count++;
}

/* Python runs its signal handlers only when C code asks: at most every 0.1 s of an
 * integration the GIL is taken briefly to run them, and an exception that one raises
 * (KeyboardInterrupt) stops the integration (nonzero) to be raised when it returns. */
static int check_signals(double *next_check)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const double seconds = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
    if (seconds < *next_check)
        return MBD_OK;
    *next_check = seconds + 0.1;
    PyGILState_STATE gil = PyGILState_Ensure();
    const int raised = PyErr_CheckSignals();
    PyGILState_Release(gil);
    return raised ? MBD_EINTEGRATE : MBD_OK;
}

/* Refuses t1 / step reports or steps beyond MAX_STEPS (a dt of 1e-300 would run forever):
 * 0, or -1 with mbdbench.Error naming the option. */
static int check_count(const char *name, double step, double t1)
{
    if (step <= 0.0 || t1 / step <= MAX_STEPS)
        return 0;
    char message[200];
    snprintf(message, sizeof message, "%s: %g over t1 = %g makes %.3g steps, more than %g", name,
             step, t1, t1 / step, MAX_STEPS);
    ext_raise_message(MBD_EINVAL, message);
    return -1;
}

/* ---- one trajectory --------------------------------------------------------------------- */

/* A row: t, q (nq), qd (nv), p (nv, momentum only), kinetic, potential, phi_norm, phid_norm. */
typedef struct {
    int nq, nv, momentum;
    row_buffer rows;
    double next_check; /* check_signals' */
} trajectory;

static int keep_state(const mbd_sim_state *s, void *ctx)
{
    trajectory *tr = ctx;
    const int interrupted = check_signals(&tr->next_check);
    if (interrupted)
        return interrupted;
    double *row = next_row(&tr->rows);
    if (!row)
        return MBD_ENOMEM;
    *row++ = s->t;
    memcpy(row, s->q, (size_t)tr->nq * sizeof *row), row += tr->nq;
    memcpy(row, s->qd, (size_t)tr->nv * sizeof *row), row += tr->nv;
    if (tr->momentum)
        memcpy(row, s->p, (size_t)tr->nv * sizeof *row), row += tr->nv;
    row[0] = s->kinetic, row[1] = s->potential, row[2] = s->phi_norm, row[3] = s->phid_norm;
    return MBD_OK;
}

/* Columns first .. first + n - 1 of the rows as a (T, n) array, or (T,) where n is 0. */
static PyObject *columns(const row_buffer *b, size_t first, int n)
{
    const npy_intp T = (npy_intp)b->count;
    PyArrayObject *a = ext_new_array(n ? 2 : 1, T, n, 0);
    if (!a)
        return NULL;
    const size_t width = n ? (size_t)n : 1;
    for (npy_intp k = 0; k < T; k++)
        memcpy(ext_data(a) + (size_t)k * width, b->rows + b->width * (size_t)k + first,
               width * sizeof(double));
    return (PyObject *)a;
}

/* Stores columns under key in dict (the dict takes the array); 0 or -1. */
static int put_columns(PyObject *dict, const char *key, const row_buffer *b, size_t first, int n)
{
    PyObject *a = columns(b, first, n);
    const int rc = a ? PyDict_SetItemString(dict, key, a) : -1;
    Py_XDECREF(a);
    return rc;
}

static PyObject *trajectory_dict(const trajectory *tr, const mbd_sim_stats *st, int loops)
{
    PyObject *d = PyDict_New();
    const size_t nq = (size_t)tr->nq, nv = (size_t)tr->nv,
                 energy = 1 + nq + nv * (1 + tr->momentum);
    int rc = !d || put_columns(d, "t", &tr->rows, 0, 0) ||
             put_columns(d, "q", &tr->rows, 1, tr->nq) ||
             put_columns(d, "qd", &tr->rows, 1 + nq, tr->nv) ||
             (tr->momentum && put_columns(d, "p", &tr->rows, 1 + nq + nv, tr->nv)) ||
             put_columns(d, "kinetic", &tr->rows, energy, 0) ||
             put_columns(d, "potential", &tr->rows, energy + 1, 0) ||
             (loops && (put_columns(d, "phi_norm", &tr->rows, energy + 2, 0) ||
                        put_columns(d, "phid_norm", &tr->rows, energy + 3, 0)));
    PyObject *stats =
        rc ? NULL
           : Py_BuildValue("{s:l, s:l, s:l, s:d, s:d}", "steps", st->steps, "rejected",
                           st->rejected, "rhs_evals", st->rhs_evals, "energy_drift",
                           st->energy_drift, "max_phi_norm", st->max_phi_norm);
    rc = rc || !stats || PyDict_SetItemString(d, "stats", stats);
    Py_XDECREF(stats);
    if (rc)
        Py_CLEAR(d);
    return d;
}

const char ext_simulate_doc[] =
    "_simulate(q0, qd0, integrator, formulation or None, t1, dt, rtol, atol, sample, solver,\n"
    "          baumgarte) -> dict\n\n"
    "mbd_simulate as it is: Model.simulate checks the options first and is the one to call.";

PyObject *ext_simulate(PyObject *obj, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    ModelObject *self = (ModelObject *)obj;
    static const char *const names[] = {"q0",     "qd0",    "integrator", "formulation",
                                        "t1",     "dt",     "rtol",       "atol",
                                        "sample", "solver", "baumgarte",  NULL};
    PyObject *o[11];
    if (ext_parse("_simulate", args, nargs, kwnames, names, 11, o))
        return NULL;
    mbd_sim_options opt = {0};
    const char *integrator = ext_text(o[2], "integrator");
    const char *formulation = o[3] == Py_None ? NULL : ext_text(o[3], "formulation");
    const mbd_solver *solver = ext_solver(o[9]);
    if (!integrator || (o[3] != Py_None && !formulation) || !solver ||
        !PyArg_ParseTuple(o[10], "dd", &opt.baumgarte.alpha, &opt.baumgarte.beta))
        return NULL;
    opt.integrator = (mbd_integrator)mbd_integrator_find(integrator);
    const unsigned offered = mbd_solver_formulations(solver);
    if (formulation) /* else the CLI's: the acceleration form where the solver has it */
        opt.formulation = strcmp(formulation, "momentum") == 0 ? MBD_MOMENTUM : MBD_ACCELERATION;
    else
        opt.formulation = offered & MBD_ACCELERATION ? MBD_ACCELERATION : MBD_MOMENTUM;
    if (ext_positive(o[4], "t1", 0, 0, &opt.t1) || ext_positive(o[5], "dt", 1, 0, &opt.dt) ||
        ext_positive(o[6], "rtol", 1, 0, &opt.rtol) ||
        ext_positive(o[7], "atol", 1, 0, &opt.atol) ||
        ext_positive(o[8], "sample", 1, 0, &opt.sample) || check_count("dt", opt.dt, opt.t1) ||
        check_count("sample", opt.sample, opt.t1))
        return NULL;
    ext_arrays held = {0};
    const double *q0 = ext_vector(&held, o[0], "q0", "nq", self->nq);
    const double *qd0 = q0 ? ext_vector(&held, o[1], "qd0", "nv", self->nv) : NULL;
    if (!qd0) {
        ext_release(&held);
        return NULL;
    }
    trajectory tr = {.nq = self->nq, .nv = self->nv, .momentum = opt.formulation == MBD_MOMENTUM};
    tr.rows.width = 1 + (size_t)self->nq + (size_t)self->nv * (1 + tr.momentum) + 4;
    mbd_sim_stats stats;
    int status;
    Py_BEGIN_ALLOW_THREADS status =
        mbd_simulate(self->model, solver, &opt, q0, qd0, keep_state, &tr, &stats);
    Py_END_ALLOW_THREADS ext_release(&held);
    PyObject *result = NULL;
    if (status && !PyErr_Occurred()) { /* else check_signals' exception stands */
        char what[160];
        snprintf(what, sizeof what, "simulate: %s %s at t = %g", mbd_solver_name(solver),
                 integrator, stats.t);
        ext_raise_solve(self, what, status, stats.failed_body);
    } else if (!status)
        result = trajectory_dict(&tr, &stats, mbd_model_nloops(self->model) > 0);
    free(tr.rows.rows);
    return result;
}

/* ---- ensembles ------------------------------------------------------------------------ */

/* A row per report: t, then every run's q, qd and (as a double) status, and t_failed. */
typedef struct {
    int K, nq, nv;
    row_buffer rows;
    double next_check; /* check_signals' */
} ensemble;

static int keep_report(const mbd_ensemble_state *s, void *ctx)
{
    ensemble *e = ctx;
    const int interrupted = check_signals(&e->next_check);
    if (interrupted)
        return interrupted;
    double *row = next_row(&e->rows);
    if (!row)
        return MBD_ENOMEM;
    *row++ = s->t;
    memcpy(row, s->q, (size_t)e->K * e->nq * sizeof *row), row += (size_t)e->K * e->nq;
    memcpy(row, s->qd, (size_t)e->K * e->nv * sizeof *row), row += (size_t)e->K * e->nv;
    for (int k = 0; k < e->K; k++)
        row[k] = s->status[k], row[e->K + k] = s->t_failed[k];
    return MBD_OK;
}

/* Run k's coordinates (n per run, starting at column first) over the reports into
 * out (K, T, n): NaN from the report where the run has failed on, as the CLI writes. */
static void run_major(const ensemble *e, size_t first, int n, double *out)
{
    const size_t T = e->rows.count, status_at = 1 + (size_t)e->K * (e->nq + e->nv);
    for (int k = 0; k < e->K; k++)
        for (size_t s = 0; s < T; s++) {
            const double *row = e->rows.rows + e->rows.width * s;
            double *to = out + ((size_t)k * T + s) * (size_t)n;
            for (int i = 0; i < n; i++)
                to[i] = row[status_at + k] != 0.0 ? NAN : row[first + (size_t)k * n + i];
        }
}

static PyObject *ensemble_dict(const ensemble *e, const int *status)
{
    const npy_intp T = (npy_intp)e->rows.count, K = e->K;
    PyArrayObject *t = ext_new_array(1, T, 0, 0), *q = ext_new_array(3, K, T, e->nq),
                  *qd = ext_new_array(3, K, T, e->nv), *t_failed = ext_new_array(1, K, 0, 0);
    PyArrayObject *st = (PyArrayObject *)PyArray_SimpleNew(1, &K, NPY_INT);
    PyObject *d = NULL;
    if (t && q && qd && t_failed && st) {
        for (npy_intp s = 0; s < T; s++)
            ext_data(t)[s] = e->rows.rows[e->rows.width * (size_t)s];
        run_major(e, 1, e->nq, ext_data(q));
        run_major(e, 1 + (size_t)K * e->nq, e->nv, ext_data(qd));
        const double *last = e->rows.rows + e->rows.width * (size_t)(T - 1);
        for (npy_intp k = 0; k < K; k++) {
            ((int *)PyArray_DATA(st))[k] = status[k];
            ext_data(t_failed)[k] = status[k] ? last[1 + (size_t)K * (e->nq + e->nv + 1) + k] : NAN;
        }
        d = Py_BuildValue("{s:O, s:O, s:O, s:O, s:O}", "t", t, "q", q, "qd", qd, "status", st,
                          "t_failed", t_failed);
    }
    Py_XDECREF(t), Py_XDECREF(q), Py_XDECREF(qd), Py_XDECREF(t_failed), Py_XDECREF(st);
    return d;
}

const char ext_simulate_ensemble_doc[] =
    "_simulate_ensemble(Q0, QD0, t1, dt, report_every, solver, threads, lanes) -> dict\n\n"
    "mbd_simulate_ensemble as it is: Model.simulate_ensemble checks the options first and\n"
    "is the one to call.";

PyObject *ext_simulate_ensemble(PyObject *obj, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    ModelObject *self = (ModelObject *)obj;
    static const char *const names[] = {"Q0",     "QD0",     "t1",    "dt", "report_every",
                                        "solver", "threads", "lanes", NULL};
    PyObject *o[8];
    if (ext_parse("_simulate_ensemble", args, nargs, kwnames, names, 8, o))
        return NULL;
    mbd_ensemble_options opt = {0};
    long every, threads, lanes;
    const mbd_solver *solver = ext_solver(o[5]);
    if (!solver || ext_positive(o[2], "t1", 0, 0, &opt.t1) ||
        ext_positive(o[3], "dt", 0, 0, &opt.dt) ||
        ext_int(o[4], "report_every", 1, LONG_MAX, 1, &every) ||
        ext_int(o[6], "threads", 0, 4096, 0, &threads) || ext_int(o[7], "lanes", 0, 8, 0, &lanes) ||
        check_count("dt", opt.dt, opt.t1))
        return NULL;
    opt.report_every = every, opt.threads = (int)threads, opt.lanes = (int)lanes;
    ext_arrays held = {0};
    npy_intp dims[2] = {-1, self->nq};
    PyArrayObject *Q0 = ext_array(&held, o[0], "Q0", 2, dims, "(K, nq)"), *QD0 = NULL;
    dims[0] = Q0 ? PyArray_DIM(Q0, 0) : 0, dims[1] = self->nv;
    if (Q0 && dims[0] > 0 && dims[0] <= 1 << 24)
        QD0 = ext_array(&held, o[1], "QD0", 2, dims, "(K, nv)");
    else if (Q0)
        PyErr_Format(PyExc_ValueError, "Q0: expected 1 to %d runs, got %zd", 1 << 24,
                     (Py_ssize_t)dims[0]);
    int *status = QD0 ? malloc((size_t)dims[0] * sizeof *status) : NULL;
    if (!status) {
        ext_release(&held);
        return QD0 ? PyErr_NoMemory() : NULL;
    }
    ensemble e = {.K = (int)dims[0], .nq = self->nq, .nv = self->nv};
    e.rows.width = 1 + (size_t)e.K * (self->nq + self->nv + 2);
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = mbd_simulate_ensemble(self->model, solver, &opt, e.K, ext_data(Q0),
                                                      ext_data(QD0), keep_report, &e, status);
    Py_END_ALLOW_THREADS ext_release(&held);
    PyObject *result = PyErr_Occurred() ? NULL /* check_signals' */
                       : rc == MBD_EINVAL || rc == MBD_ENOMEM || rc == MBD_EUNSUPPORTED
                           ? ext_raise("simulate_ensemble", rc)
                           : ensemble_dict(&e, status);
    free(e.rows.rows);
    free(status);
    return result;
}
