/* cmd_export.c: mbd export FORMAT MODEL --out FILE. */
#include "cli.h"

#include <string.h>
#include <sys/stat.h>

int cmd_export(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {OUTPUT("--out"), CLI_FLOATING_BASE, END_FLAGS};
    const char *pos[2];
    int npos, rc = cli_parse(cmd, argc, argv, 2, flags, pos, 2, &npos);
    if (rc)
        return rc;
    if (npos != 2) {
        fprintf(stderr,
                "mbd %s: expected FORMAT MODEL, as in 'mbd export mjcf MODEL --out "
                "FILE.xml'; got %d argument%s\n",
                cmd, npos, npos == 1 ? "" : "s");
        return CLI_USAGE_ERROR;
    }
    if (strcmp(pos[0], "mjcf") != 0) {
        fprintf(stderr, "mbd %s: FORMAT: unknown format '%.60s' (one of: mjcf)\n", cmd, pos[0]);
        return CLI_USAGE_ERROR;
    }
    const char *out = cli_get(flags, "--out");
    if (!out) { /* an unusable path was refused as given */
        fprintf(stderr, "mbd %s: --out: expected the MJCF file to write, got nothing\n", cmd);
        return CLI_USAGE_ERROR;
    }
    struct stat info;
    if (stat(out, &info) == 0 && !S_ISREG(info.st_mode)) { /* which its rename would replace */
        fprintf(stderr,
                "mbd %s: output '%s': not a regular file: an MJCF model is written "
                "whole, with its parts beside it\n",
                cmd, out);
        return CLI_USAGE_ERROR;
    }
    mbd_model *model = cli_load_model(cmd, pos[1], flags);
    if (!model)
        return CLI_USAGE_ERROR;
    char err[512];
    if (mbd_export_mjcf(model, out, err, sizeof err) != MBD_OK) {
        fprintf(stderr, "mbd %s: %s\n", cmd, err);
        rc = CLI_RUNTIME_ERROR;
    }
    mbd_model_free(model);
    return rc;
}
