/* faulty.c: a plugin with one fault, chosen by the macro FAULT_<NAME> that the Makefile
 * defines (one library per fault), for tests/test_plugins.c. Every fault but the faults
 * of a call must be refused when the plugin is loaded; those load, and then nan_result
 * gives NaN (its forward and its derivatives), work_new_fails a NULL workspace and
 * not_a_status the code 42. Built against ABI 1's header (tests/plugins/abi1/) with
 * OLDER_ABI, it has no fault but its age: two solvers, faulty and faulty-2, in ABI 1's
 * shorter structs. */
#include "mbd_plugin.h"

#include <math.h>
#include <string.h>

static void *work_new(const mbd_model *model)
{
    (void)model;
#if defined FAULT_WORK_NEW_FAILS
    return NULL;
#else
    static int no_memory_needed;
    return &no_memory_needed;
#endif
}

static void work_free(void *work) { (void)work; }

#if defined FAULT_NOT_A_STATUS
#define CALL_STATUS 42
#else
#define CALL_STATUS MBD_OK
#endif

static int forward(const mbd_model *model, void *work, const double *q, const double *qd,
                   const double *tau, double *qdd)
{
    (void)work, (void)q, (void)qd, (void)tau;
    for (int k = 0; k < mbd_model_nv(model); k++)
        qdd[k] = NAN;
    return CALL_STATUS;
}

#if MBD_PLUGIN_ABI >= 2
/* NaN in each matrix asked for. */
static int forward_derivatives(const mbd_model *model, void *work, const double *q,
                               const double *qd, const double *tau, double *dqdd_dq,
                               double *dqdd_dqd, double *dqdd_dtau)
{
    (void)work, (void)q, (void)qd, (void)tau;
    const int nn = mbd_model_nv(model) * mbd_model_nv(model);
    double *const outputs[] = {dqdd_dq, dqdd_dqd, dqdd_dtau};
    for (int k = 0; k < 3; k++)
        for (int i = 0; outputs[k] && i < nn; i++)
            outputs[k][i] = NAN;
    return CALL_STATUS;
}
#define DERIVATIVES .forward_derivatives = forward_derivatives,
#else
#define DERIVATIVES
#endif

#if defined FAULT_WRONG_ABI
#define ABI (MBD_PLUGIN_ABI + 1)
#else
#define ABI MBD_PLUGIN_ABI
#endif

/* unused where the fault leaves no table (FAULT_NO_TABLE_FUNCTION, FAULT_NULL_TABLE) */
#define TABLE_DATA static __attribute__((unused))

TABLE_DATA char long_name[10 * 1024];
#if defined FAULT_NULL_NAME
#define NAME NULL
#elif defined FAULT_SPACE_NAME
#define NAME "two words"
#elif defined FAULT_LONG_NAME
#define NAME long_name
#elif defined FAULT_BUILTIN_NAME
#define NAME "dense"
#elif defined FAULT_DASH_NAME
#define NAME "--help"
#elif defined FAULT_ROW_NAME
#define NAME "dense-momentum"
#elif defined FAULT_SIMD_NAME
#define NAME "mine-simd"
#elif defined FAULT_METHOD_NAME
#define NAME "analytic"
#else
#define NAME "faulty"
#endif

#define SUMMARY "a plugin with a fault"
#define ENTRY(NAME_, SUMMARY_, WORK_NEW_, WORK_FREE_, FORWARD_)                                    \
    {                                                                                              \
        .abi = ABI, .name = NAME_, .summary = SUMMARY_, .work_new = WORK_NEW_,                     \
        .work_free = WORK_FREE_, .forward = FORWARD_, DERIVATIVES                                  \
    }

#if defined OLDER_ABI
#define TWIN_NAME "faulty-2"
#else
#define TWIN_NAME NAME
#endif

TABLE_DATA mbd_plugin_solver table[] = {
#if defined FAULT_NULL_SUMMARY
    ENTRY(NAME, NULL, work_new, work_free, forward),
#elif defined FAULT_NULL_WORK_NEW
    ENTRY(NAME, SUMMARY, NULL, work_free, forward),
#elif defined FAULT_NULL_WORK_FREE
    ENTRY(NAME, SUMMARY, work_new, NULL, forward),
#elif defined FAULT_NULL_FORWARD
    ENTRY(NAME, SUMMARY, work_new, work_free, NULL),
#else
    ENTRY(NAME, SUMMARY, work_new, work_free, forward),
#endif
#if defined FAULT_MIXED_ABI /* its twin, claiming ABI 1 */
    {.abi = 1,
     .name = "faulty-2",
     .summary = SUMMARY,
     .work_new = work_new,
     .work_free = work_free,
     .forward = forward},
#else
    ENTRY(TWIN_NAME, SUMMARY, work_new, work_free, forward), /* its twin */
#endif
};

#if defined FAULT_NEGATIVE_COUNT
#define COUNT (-1)
#elif defined FAULT_HUGE_COUNT
#define COUNT 1000000
#elif defined FAULT_TWIN_NAMES || defined FAULT_MIXED_ABI || defined OLDER_ABI
#define COUNT 2
#else
#define COUNT 1
#endif

#if !defined FAULT_NO_TABLE_FUNCTION
const mbd_plugin_solver *mbd_plugin_solvers(int *count)
{
    memset(long_name, 'x', sizeof long_name - 1);
    *count = COUNT;
#if defined FAULT_NULL_TABLE
    return NULL;
#else
    return table;
#endif
}
#else
int mbd_plugin_solver_table(void) { return 0; }              /* a misspelt entry point */
#endif
