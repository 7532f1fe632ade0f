/* fuzz_cases: libFuzzer target for reference-data files (models/cases.c). Each input is
 * written to one temporary file and read by mbd_cases_read; a file that reads has its model
 * loaded and matched (generator specs only: a path could name any file) and, when small
 * enough to solve, is replayed through every solver. Every failure must leave a one-line
 * message, and a replay that succeeds a worst error that is a number where a case was. */
#include "fuzz_exercise.h"

static void replay_every_solver(const mbd_cases *cases, const mbd_model *model)
{
    for (int s = 0; s < mbd_solver_count(); s++) {
        char err[512] = "";
        mbd_cases_worst worst;
        const int status =
            mbd_cases_replay(cases, model, mbd_solver_at(s), &worst, err, sizeof err);
        fuzz_require(fuzz_status_valid(status), "mbd_cases_replay status");
        if (status != MBD_OK) {
            fuzz_check_load_message(err);
            continue;
        }
        fuzz_require(worst.case_index >= 0 && worst.case_index < mbd_cases_count(cases) &&
                         worst.field && !(worst.error < 0.0),
                     "mbd_cases_replay's worst disagreement");
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_make_model_file(".json");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_write_model_file(data, size);
    char err[512] = "";
    mbd_cases *cases;
    int status = mbd_cases_read(fuzz_model_path, &cases, err, sizeof err);
    fuzz_require(fuzz_status_valid(status) && (status == MBD_OK) == (cases != NULL),
                 "mbd_cases_read status");
    if (!cases) {
        fuzz_check_load_message(err);
        return 0;
    }
    const char *spec = mbd_cases_model(cases);
    mbd_model *model = NULL;
    if (strchr(spec, ':') && !fuzz_spec_skipped(spec)) {
        status = mbd_cases_load_model(cases, &model, err, sizeof err);
        fuzz_require(fuzz_status_valid(status) && (status == MBD_OK) == (model != NULL),
                     "mbd_cases_load_model status");
        if (!model)
            fuzz_check_message(err);
    }
    if (model && mbd_model_nv(model) <= FUZZ_SOLVE_MAX_NV)
        replay_every_solver(cases, model);
    mbd_model_free(model);
    mbd_cases_free(cases);
    return 0;
}
