/* ext.c: the helpers of the extension: the library's constructors, errors, arguments,
 * arrays and the pool of workspaces and batches (ext.h). */
#include "ext.h"

#include "mbd_plugin.h"

#include <math.h>
#include <string.h>

/* ---- the library's constructors: the only places that call them -------------------- */

int ext_load_model(const char *path_or_spec, int floating_base, mbd_model **model, char *err,
                   size_t err_size)
{
    const mbd_load_options options = {.floating_base = floating_base};
    return mbd_model_load(path_or_spec, &options, model, err, err_size);
}

int ext_load_text(const char *text, const char *name, int floating_base, mbd_model **model,
                  char *err, size_t err_size)
{
    const mbd_load_options options = {.floating_base = floating_base};
    return mbd_model_load_text(text, name, &options, model, err, err_size);
}

int ext_load_mujoco(const void *mujoco_model, const char *name, mbd_model **model, char *err,
                    size_t err_size)
{
    return mbd_model_from_mujoco(mujoco_model, name, model, err, err_size);
}

int ext_new_work(const mbd_model *model, const mbd_solver *solver, mbd_work **work)
{
    return mbd_work_new(model, solver, work);
}

int ext_new_batch(const mbd_model *model, const mbd_solver *solver, int threads, int lanes,
                  mbd_batch **batch)
{
    return mbd_batch_new(model, solver, threads, lanes, batch);
}

/* ---- errors ------------------------------------------------------------------------ */

extern PyObject *ext_error_type; /* mbdbench.Error, made by the module's init */

PyObject *ext_raise_message(int status, const char *message)
{
    PyObject *exc = PyObject_CallFunction(ext_error_type, "s", message);
    PyObject *code = exc ? PyLong_FromLong(status) : NULL;
    if (code && PyObject_SetAttrString(exc, "status", code) == 0)
        PyErr_SetObject(ext_error_type, exc);
    Py_XDECREF(code);
    Py_XDECREF(exc);
    return NULL;
}

PyObject *ext_raise(const char *what, int status)
{
    if (status == MBD_ENOMEM)
        return PyErr_Format(PyExc_MemoryError, "%s: %s", what, mbd_strerror(status));
    char message[512];
    snprintf(message, sizeof message, "%s: %s", what, mbd_strerror(status));
    return ext_raise_message(status, message);
}

PyObject *ext_raise_solve(const ModelObject *self, const char *what, int status, int body)
{
    if ((status != MBD_ESINGULAR && status != MBD_EFRICTION) || body < 0)
        return ext_raise(what, status);
    const mbd_body_def *def = mbd_model_body(self->model, body);
    char message[512];
    snprintf(message, sizeof message, "%s: %s at the %s joint of body %d (\"%s\")", what,
             mbd_strerror(status), mbd_joint_type_name(def->joint), body, def->name);
    return ext_raise_message(status, message);
}

/* ---- arguments --------------------------------------------------------------------- */

static int name_index(const char *const *names, int count, PyObject *key)
{
    for (int k = 0; k < count; k++)
        if (PyUnicode_CompareWithASCIIString(key, names[k]) == 0)
            return k;
    return -1;
}

int ext_parse(const char *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
              const char *const *names, int required, PyObject **out)
{
    int count = 0;
    while (names[count])
        out[count++] = NULL;
    if (nargs > count) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", func, count,
                     nargs);
        return -1;
    }
    for (Py_ssize_t k = 0; k < nargs; k++)
        out[k] = args[k];
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        const int at = name_index(names, count, key);
        if (at < 0 || out[at]) {
            PyErr_Format(PyExc_TypeError,
                         at < 0 ? "%s() got an unexpected keyword argument '%U'"
                                : "%s() got multiple values for argument '%U'",
                         func, key);
            return -1;
        }
        out[at] = args[nargs + k];
    }
    for (int k = 0; k < count; k++) {
        if (k < required && !out[k]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", func, names[k]);
            return -1;
        }
        if (k >= required && out[k] == Py_None)
            out[k] = NULL;
    }
    return 0;
}

const char *ext_text(PyObject *obj, const char *name)
{
    Py_ssize_t size;
    const char *text = PyUnicode_AsUTF8AndSize(obj, &size);
    if (text && strlen(text) != (size_t)size) { /* C would read it up to the NUL */
        PyErr_Format(PyExc_ValueError, "%s: contains a NUL character: %R", name, obj);
        return NULL;
    }
    return text;
}

const mbd_solver *ext_solver(PyObject *obj)
{
    static const mbd_solver *dense;
    if (!obj)
        return dense ? dense : (dense = mbd_solver_find("dense"));
    const char *name = PyUnicode_Check(obj) ? ext_text(obj, "solver") : NULL;
    const mbd_solver *solver = name ? mbd_solver_find(name) : NULL;
    if (solver || PyErr_Occurred())
        return solver;
    /* A name as its repr: quoted, and its line breaks escaped (messages are one line). */
    PyObject *shown = name ? PyObject_Repr(obj) : NULL;
    const char *text = !name ? Py_TYPE(obj)->tp_name : shown ? PyUnicode_AsUTF8(shown) : NULL;
    if (!text) {
        Py_XDECREF(shown);
        return NULL;
    }
    char message[512];
    int at = snprintf(message, sizeof message, "solver: unknown solver %.60s (one of:", text);
    Py_XDECREF(shown);
    for (int k = 0; k < mbd_solver_count() && at < (int)sizeof message; k++)
        at += snprintf(message + at, sizeof message - (size_t)at, " %s",
                       mbd_solver_name(mbd_solver_at(k)));
    if (at < (int)sizeof message)
        snprintf(message + at, sizeof message - (size_t)at, ")");
    ext_raise_message(MBD_EINVAL, message);
    return NULL;
}

int ext_int(PyObject *obj, const char *name, long lo, long hi, long def, long *out)
{
    *out = def;
    if (!obj)
        return 0;
    if (!PyLong_Check(obj) || PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int, got %s", name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow;
    *out = PyLong_AsLongAndOverflow(obj, &overflow);
    if (*out == -1 && PyErr_Occurred())
        return -1;
    if (overflow || *out < lo || *out > hi) {
        PyErr_Format(PyExc_ValueError, "%s: expected an int in [%ld, %ld], got %R", name, lo, hi,
                     obj);
        return -1;
    }
    return 0;
}

int ext_positive(PyObject *obj, const char *name, int allow_zero, double def, double *out)
{
    *out = def;
    if (!obj)
        return 0;
    *out = PyFloat_AsDouble(obj);
    if (*out == -1.0 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s: expected a number, got %s", name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (!isfinite(*out) || *out < 0.0 || (*out == 0.0 && !allow_zero)) {
        PyErr_Format(PyExc_ValueError, "%s: expected a finite number %s 0, got %R", name,
                     allow_zero ? ">=" : ">", obj);
        return -1;
    }
    return 0;
}

/* ---- arrays ------------------------------------------------------------------------ */

static int usable_as_is(PyObject *obj)
{
    if (!PyArray_CheckExact(obj))
        return 0;
    PyArrayObject *a = (PyArrayObject *)obj;
    return PyArray_TYPE(a) == NPY_DOUBLE && PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a) &&
           PyArray_ISNOTSWAPPED(a);
}

static void shape_text(char *text, size_t size, int ndim, const npy_intp *dims)
{
    int at = snprintf(text, size, "(");
    for (int d = 0; d < ndim && at < (int)size; d++)
        at += snprintf(text + at, size - (size_t)at, d ? ", %zd" : "%zd", (Py_ssize_t)dims[d]);
    if (at < (int)size)
        snprintf(text + at, size - (size_t)at, ndim == 1 ? ",)" : ")");
}

/* The expected shape with the lengths filled in, e.g. "(K, nq) = (K, 7)". */
static void expected_text(char *text, size_t size, int ndim, const npy_intp *dims,
                          const char *dim_text)
{
    char lengths[64];
    int at = snprintf(lengths, sizeof lengths, "(");
    for (int d = 0; d < ndim; d++)
        at += snprintf(lengths + at, sizeof lengths - (size_t)at, dims[d] < 0 ? "%sK" : "%s%zd",
                       d ? ", " : "", (Py_ssize_t)dims[d]);
    snprintf(lengths + at, sizeof lengths - (size_t)at, ndim == 1 ? ",)" : ")");
    snprintf(text, size, "%s = %s", dim_text, lengths);
}

/* ValueError for an array whose float64 copy does not fit in memory (a broadcast view of
 * 10^12 rows takes none until copied), naming its shape rather than its contents. */
static PyArrayObject *too_large(const char *name, PyArrayObject *a)
{
    char shape[96], message[256];
    shape_text(shape, sizeof shape, PyArray_NDIM(a), PyArray_DIMS(a));
    snprintf(message, sizeof message,
             "%s: shape %s is too large: its float64 copy (%.3g "
             "bytes) does not fit in memory",
             name, shape, 8.0 * (double)PyArray_SIZE(a));
    PyErr_SetString(PyExc_ValueError, message);
    return NULL;
}

/* obj converted to float64, C order; TypeError naming the argument where it cannot be. */
static PyArrayObject *converted(PyObject *obj, const char *name, int ndim, const npy_intp *dims,
                                const char *dim_text)
{
    char expected[128];
    expected_text(expected, sizeof expected, ndim, dims, dim_text);
    if (obj == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: expected a float64 array of shape %s, got None", name,
                     expected);
        return NULL;
    }
    PyObject *a =
        PyArray_FromAny(obj, PyArray_DescrFromType(NPY_DOUBLE), 0, 0, NPY_ARRAY_IN_ARRAY, NULL);
    if (a)
        return (PyArrayObject *)a;
    if (PyErr_ExceptionMatches(PyExc_MemoryError) && PyArray_Check(obj))
        return too_large(name, (PyArrayObject *)obj);
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_Format(PyExc_TypeError, "%s: expected a float64 array of shape %s, got %s (%S)", name,
                 expected, Py_TYPE(obj)->tp_name, value ? value : Py_None);
    Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(trace);
    return NULL;
}

PyArrayObject *ext_array(ext_arrays *arrays, PyObject *obj, const char *name, int ndim,
                         const npy_intp *dims, const char *dim_text)
{
    PyArrayObject *a;
    if (usable_as_is(obj)) {
        Py_INCREF(obj);
        a = (PyArrayObject *)obj;
    } else if (!(a = converted(obj, name, ndim, dims, dim_text)))
        return NULL;
    int fits = PyArray_NDIM(a) == ndim;
    for (int d = 0; fits && d < ndim; d++)
        fits = dims[d] < 0 || PyArray_DIM(a, d) == dims[d];
    if (!fits) {
        char expected[128], got[96];
        expected_text(expected, sizeof expected, ndim, dims, dim_text);
        shape_text(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
        PyErr_Format(PyExc_ValueError, "%s: expected shape %s, got %s", name, expected, got);
        Py_DECREF(a);
        return NULL;
    }
    arrays->held[arrays->count++] = a;
    return a;
}

const double *ext_vector(ext_arrays *arrays, PyObject *obj, const char *name, const char *dim_name,
                         npy_intp n)
{
    char dim_text[32];
    snprintf(dim_text, sizeof dim_text, "(%s,)", dim_name);
    PyArrayObject *a = ext_array(arrays, obj, name, 1, &n, dim_text);
    const double *x = a ? ext_data(a) : NULL;
    for (npy_intp k = 0; x && k < n; k++)
        if (!isfinite(x[k])) { /* the library would say only that some input is */
            char message[160];
            snprintf(message, sizeof message, "%s: element %zd is %g: %s", name, (Py_ssize_t)k,
                     x[k], mbd_strerror(MBD_ENONFINITE));
            ext_raise_message(MBD_ENONFINITE, message);
            return NULL;
        }
    return x;
}

void ext_release(ext_arrays *arrays)
{
    for (int k = 0; k < arrays->count; k++)
        Py_DECREF(arrays->held[k]);
    arrays->count = 0;
}

PyArrayObject *ext_new_array(int ndim, npy_intp d0, npy_intp d1, npy_intp d2)
{
    npy_intp dims[3] = {d0, d1, d2};
    return (PyArrayObject *)PyArray_SimpleNew(ndim, dims, NPY_DOUBLE);
}

/* ---- the pool ---------------------------------------------------------------------- */

static void *pool_take(ModelObject *self, const mbd_solver *solver, int threads, int lanes)
{
    for (int k = 0; k < POOL_SLOTS; k++) {
        pool_slot *s = &self->pool[k];
        if (s->object && s->solver == solver && s->threads == threads && s->lanes == lanes) {
            void *object = s->object;
            s->object = NULL;
            return object;
        }
    }
    return NULL;
}

/* Whether an empty slot took the object; else the caller frees it. */
static int pool_put(ModelObject *self, const mbd_solver *solver, int threads, int lanes,
                    void *object)
{
    for (int k = 0; k < POOL_SLOTS; k++)
        if (!self->pool[k].object) {
            self->pool[k] = (pool_slot){solver, threads, lanes, object};
            return 1;
        }
    return 0;
}

mbd_work *ext_take_work(ModelObject *self, const mbd_solver *solver)
{
    mbd_work *work = pool_take(self, solver, -1, -1);
    if (work)
        return work;
    const int status = ext_new_work(self->model, solver, &work);
    if (status) {
        char what[160];
        snprintf(what, sizeof what, "workspace of solver '%s'%s",
                 solver ? mbd_solver_name(solver) : "none",
                 solver && mbd_solver_plugin_path(solver) ? " (or its plugin's work_new failed)"
                                                          : "");
        ext_raise(what, status);
    }
    return work;
}

void ext_put_work(ModelObject *self, const mbd_solver *solver, mbd_work *work)
{
    if (!pool_put(self, solver, -1, -1, work))
        mbd_work_free(work);
}

mbd_batch *ext_take_batch(ModelObject *self, const mbd_solver *solver, int threads, int lanes)
{
    mbd_batch *batch = pool_take(self, solver, threads, lanes);
    if (batch)
        return batch;
    const int status = ext_new_batch(self->model, solver, threads, lanes, &batch);
    if (status)
        ext_raise("batch", status);
    return batch;
}

void ext_put_batch(ModelObject *self, const mbd_solver *solver, int threads, int lanes,
                   mbd_batch *batch)
{
    if (!pool_put(self, solver, threads, lanes, batch))
        mbd_batch_free(batch);
}
