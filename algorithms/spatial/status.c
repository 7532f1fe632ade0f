/* status.c: what every entry point shares about statuses: each one's message, and the
 * check of its inputs and results for non-finite numbers. */
#include <math.h>

#include "mbd.h"
#include "spatial/spatial.h"

const char *mbd_strerror(int status)
{
    switch (status) {
#define MBD_TEXT_ROW(name, value, text)                                                            \
    case name:                                                                                     \
        return text;
        MBD_STATUS_LIST(MBD_TEXT_ROW)
#undef MBD_TEXT_ROW
    }
    return "unknown status";
}

/* No early exit: inputs are normally finite, and the loop then vectorizes. */
int check_finite(const double *x, int n)
{
    int bad = 0;
    for (int k = 0; k < n; k++)
        bad |= !isfinite(x[k]);
    return bad ? MBD_ENONFINITE : MBD_OK;
}
