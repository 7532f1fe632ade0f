/* ext.h: what the two sources of the extension mbdbench._mbdbench share: the Model object,
 * its pool of workspaces and batches, argument parsing and array conversion. */
#ifndef MBDBENCH_EXT_H
#define MBDBENCH_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#ifndef MBDBENCH_EXT_MAIN
#define NO_IMPORT_ARRAY
#endif
#define PY_ARRAY_UNIQUE_SYMBOL mbdbench_ARRAY_API
#include <numpy/arrayobject.h>

#include "mbd.h"

/* Workspaces and batches kept for reuse. Only a thread that holds the GIL takes one out or
 * puts one back, and one taken out belongs to that call alone until it is put back, so two
 * threads never share one, while the GIL is released or not. */
#define POOL_SLOTS 16

typedef struct {
    const mbd_solver *solver; /* NULL: a workspace without a solver (inverse dynamics, H) */
    int threads, lanes;       /* a batch's; -1 for a workspace */
    void *object;             /* NULL: the slot is empty */
} pool_slot;

/* What a Model was made from, which its spec holds: a path or generator spec, a model
 * file's text (Model.from_string), or a MuJoCo model (Model.from_mujoco: its name). */
typedef enum { SOURCE_SPEC, SOURCE_TEXT, SOURCE_MUJOCO } model_source;

typedef struct {
    PyObject_HEAD mbd_model *model; /* never NULL: tp_new loads it or fails */
    int nq, nv, nbodies;
    PyObject *spec; /* what it was loaded from: a str, (text, name) or the MjModel's name */
    int source;     /* model_source */
    int floating_base;
    pool_slot pool[POOL_SLOTS];
} ModelObject;

extern PyTypeObject Model_Type;

/* Single-state calls on models with at least this many velocities release the GIL: below it
 * the release and reacquisition would cost more than the call. */
#define GIL_RELEASE_NV 32

/* ---- the library's constructors (ext.c): each called in one place only ---------------- */
int ext_load_model(const char *path_or_spec, int floating_base, mbd_model **model, char *err,
                   size_t err_size);
int ext_load_text(const char *text, const char *name, int floating_base, mbd_model **model,
                  char *err, size_t err_size);
int ext_load_mujoco(const void *mujoco_model, const char *name, mbd_model **model, char *err,
                    size_t err_size);
int ext_new_work(const mbd_model *model, const mbd_solver *solver, mbd_work **work);
int ext_new_batch(const mbd_model *model, const mbd_solver *solver, int threads, int lanes,
                  mbd_batch **batch);

/* ---- errors ------------------------------------------------------------------------ */
/* Raises mbdbench.Error(message) with .status; returns NULL. */
PyObject *ext_raise_message(int status, const char *message);
/* Raises mbdbench.Error("what: the library's message") with its .status; returns NULL. */
PyObject *ext_raise(const char *what, int status);
/* As ext_raise, naming the body whose joint failed after MBD_ESINGULAR or MBD_EFRICTION. */
PyObject *ext_raise_solve(const ModelObject *self, const char *what, int status, int body);

/* ---- arguments --------------------------------------------------------------------- */
/* Places the positional and keyword arguments of a METH_FASTCALL | METH_KEYWORDS call into
 * out[] by names (NULL-terminated); absent ones, and None past the first required, stay
 * NULL. 0, or -1 with TypeError. */
int ext_parse(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              const char *const *names, int required, PyObject **out);
/* obj's UTF-8 text, or NULL with the exception: ValueError naming the argument for a NUL
 * character, which would end the text early in C. */
const char *ext_text(PyObject *obj, const char *name);
/* The solver called by obj (a str; NULL: "dense", the CLI's default), or NULL with
 * mbdbench.Error. */
const mbd_solver *ext_solver(PyObject *obj);
/* An int argument in [lo, hi] (def where obj is NULL); 0, or -1 with TypeError/ValueError. */
int ext_int(PyObject *obj, const char *name, long lo, long hi, long def, long *out);
/* A float argument, finite and > 0 unless allow_zero (def where obj is NULL). */
int ext_positive(PyObject *obj, const char *name, int allow_zero, double def, double *out);

/* The arrays a call converted, released together. */
typedef struct {
    PyArrayObject *held[8];
    int count;
} ext_arrays;

/* obj as C-contiguous float64 of shape dims (ndim 1 or 2; a dimension < 0 takes any
 * length): the caller's array itself where it already is one, else converted once. dim_text
 * names the dimensions for the message, e.g. "(K, nq)". NULL with TypeError or ValueError
 * naming the argument and the shape. */
PyArrayObject *ext_array(ext_arrays *arrays, PyObject *obj, const char *name, int ndim,
                         const npy_intp *dims, const char *dim_text);
/* A vector of n finite doubles (ext_array with ndim 1; NaN or Inf: mbdbench.Error naming
 * the argument and element); NULL obj gives NULL without error only where optional. */
const double *ext_vector(ext_arrays *arrays, PyObject *obj, const char *name, const char *dim_name,
                         npy_intp n);
void ext_release(ext_arrays *arrays);

/* A new float64 array of the given shape (uninitialized), or NULL with MemoryError. */
PyArrayObject *ext_new_array(int ndim, npy_intp d0, npy_intp d1, npy_intp d2);
#define ext_data(array) ((double *)PyArray_DATA(array))

/* ---- the pool (ext.c) --------------------------------------------------------------- */
/* A workspace of solver (NULL: none) for this call alone, or NULL with an exception. */
mbd_work *ext_take_work(ModelObject *self, const mbd_solver *solver);
void ext_put_work(ModelObject *self, const mbd_solver *solver, mbd_work *work);
mbd_batch *ext_take_batch(ModelObject *self, const mbd_solver *solver, int threads, int lanes);
void ext_put_batch(ModelObject *self, const mbd_solver *solver, int threads, int lanes,
                   mbd_batch *batch);

/* ---- methods defined in simulate.c ------------------------------------------------ */
PyObject *ext_simulate(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ext_simulate_ensemble(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames);
extern const char ext_simulate_doc[], ext_simulate_ensemble_doc[];

#endif
