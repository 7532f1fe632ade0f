/* fuzz_states: libFuzzer target for the initial states of an ensemble (`mbd simulate
 * --ensemble K --states FILE`, src/cmd_ensemble.c): the input after its first byte is the
 * file, which the command reads and then integrates (rk4, two steps, CSV on standard
 * output, which libFuzzer's -close_fd_mask sends to /dev/null). The first byte picks the
 * model, the solver and K (1 to 16). Checks: the command returns one of its exit statuses. */
#include "cli.h"
#include "fuzz_exercise.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_make_model_file(".csv");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const models[] = {"chain:n=2,joint=revolute", "chain:n=2,joint=free",
                                         "chain:n=3,joint=spherical", "tree:n=4,branching=2"};
    static const char *const solvers[] = {"dense", "bodies", "poisson-ldlt", "sparse"};
    if (size < 1)
        return 0;
    fuzz_write_model_file(data + 1, size - 1);
    char runs[8];
    snprintf(runs, sizeof runs, "%d", 1 + ((data[0] >> 2) & 15));
    char *argv[] = {"mbd",
                    "simulate",
                    (char *)models[data[0] & 3],
                    "--integrator",
                    "rk4",
                    "--t1",
                    "0.02",
                    "--dt",
                    "0.01",
                    "--solver",
                    (char *)solvers[data[0] >> 6],
                    "--ensemble",
                    runs,
                    "--states",
                    fuzz_model_path,
                    NULL};
    const int rc = cmd_simulate("simulate", (int)(sizeof argv / sizeof argv[0]) - 1, argv);
    fuzz_require(rc == 0 || rc == CLI_USAGE_ERROR || rc == CLI_RUNTIME_ERROR, "exit status");
    return 0;
}
