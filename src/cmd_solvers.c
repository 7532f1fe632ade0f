/* cmd_solvers.c: mbd solvers, the registered solvers with their formulations. */
#include "cli.h"

int cmd_solvers(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {END_FLAGS};
    const char *pos[1];
    int npos, rc = cli_parse(cmd, argc, argv, 2, flags, pos, 0, &npos);
    if (rc)
        return rc;
    for (int k = 0; k < mbd_solver_count(); k++) {
        const mbd_solver *s = mbd_solver_at(k);
        unsigned forms = mbd_solver_formulations(s);
        printf("%-14s %-22s %s\n", mbd_solver_name(s),
               forms == (MBD_ACCELERATION | MBD_MOMENTUM) ? "acceleration,momentum"
               : forms == MBD_MOMENTUM                    ? "momentum"
                                                          : "acceleration",
               mbd_solver_summary(s));
    }
    return 0;
}
