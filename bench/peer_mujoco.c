/* peer_mujoco.c: MuJoCo (the mujoco wheel's libmujoco) as a peer of the mbd solvers.
 *
 *   peer-mujoco check MODEL [--states K] [--seed S] [--direct] [--floating-base]
 *       for K random states: MuJoCo's qacc (mj_forward) against the qdd of every
 *       acceleration solver, and MuJoCo's H and bias forces against ours; exit 1 if they
 *       differ by more than 1e-10 (qdd: or than cond(H) allows; see peer_mujoco_check.c).
 *       --direct: MuJoCo reads MODEL's file itself (a URDF or MJCF) instead of our MJCF
 *       export, coordinates matched by joint name, with only rigid-body dynamics enabled
 *       (no joint limits, damping, contacts or actuators);
 *       --tolerance replaces 1e-10.
 *   peer-mujoco time [FAMILY=]MODEL... [--min-time S] [--repetitions R] [--dense-max-n N]
 *                    [--json FILE] [--dat FILE]
 *       per call, with bench/'s timing core: every solver variant, MuJoCo's forward-dynamics
 *       path and its factor + solve alone, on the same states, in the same run; Google
 *       Benchmark JSON and a .dat for report/mujoco.gp.
 *
 * This file holds main; peer_mujoco_model.c puts our model into MuJoCo (the coordinates
 * matched), peer_mujoco_check.c checks and peer_mujoco_time.c times. */
#include "peer_mujoco.h"

#include "harness.h"

#include "../src/cli.h"

#include <stdio.h>
#include <string.h>

int peer_usage(void)
{
    fprintf(stderr,
            "usage: peer-mujoco check MODEL [--states K] [--seed S] [--direct] [--floating-base]\n"
            "                         [--tolerance T]\n"
            "       peer-mujoco time [FAMILY=]MODEL... [--min-time S] [--repetitions R]\n"
            "                        [--dense-max-n N] [--json FILE] [--dat FILE]\n");
    return CLI_USAGE_ERROR;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return peer_usage();
    bench_catch_signals();
    if (strcmp(argv[1], "check") == 0)
        return peer_check_main(argc, argv);
    if (strcmp(argv[1], "time") == 0)
        return peer_time_main(argc, argv);
    fprintf(stderr, "peer-mujoco: unknown mode '%.60s' (check or time)\n", argv[1]);
    return CLI_USAGE_ERROR;
}
