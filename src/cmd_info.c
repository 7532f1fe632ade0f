/* cmd_info.c: mbd info MODEL [--json], the model's bodies, joints and coordinates, and what
 * the dynamics leave out of its file. */
#include "cli.h"

#include <jansson.h>
#include <string.h>

/* One entry of info --json's "joints". */
static json_t *joint_entry(const char *name, const char *type, const char *body, int q_index,
                           int v_index, int nq, int nv)
{
    return json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i}", "name", name, "type", type, "body",
                     body, "q_index", q_index, "v_index", v_index, "nq", nq, "nv", nv);
}

json_t *cli_joints_json(const mbd_model *model)
{
    json_t *joints = json_array();
    int q = 0, v = 0, status = joints ? 0 : -1;
    for (int i = 0; i < mbd_model_nbodies(model) && status == 0; i++) {
        const mbd_body_def *b = mbd_model_body(model, i);
        const int nq = mbd_joint_type_nq(b->joint), nv = mbd_joint_type_nv(b->joint);
        status = json_array_append_new(joints, joint_entry(mbd_model_joint_name(model, i),
                                                           mbd_joint_type_name(b->joint), b->name,
                                                           q, v, nq, nv));
        q += nq, v += nv;
    }
    for (int f = 0; f < mbd_model_nframes(model) && status == 0; f++) {
        const mbd_frame_def *fr = mbd_model_frame(model, f);
        status = json_array_append_new(
            joints, joint_entry(fr->joint_name ? fr->joint_name : fr->name, "fixed",
                                fr->body < 0 ? "world" : mbd_model_body(model, fr->body)->name, -1,
                                -1, 0, 0));
    }
    if (status == 0)
        return joints;
    json_decref(joints);
    return NULL;
}

/* What the model leaves out, one string per item (an empty array for none). */
static json_t *left_out_json(const mbd_model *model)
{
    json_t *items = json_array();
    const char *text = mbd_model_left_out(model);
    for (const char *at = text; items && at && *at;) {
        const size_t length = strcspn(at, ";");
        if (json_array_append_new(items, json_stringn(at, length)) < 0) {
            json_decref(items);
            return NULL;
        }
        at += length;
        at += strspn(at, "; ");
    }
    return items;
}

/* {"nq", "nv", "joints": [...], "left_out": [...]}. */
static int print_info_json(const mbd_model *model)
{
    json_t *joints = cli_joints_json(model), *left_out = left_out_json(model);
    if (!joints || !left_out) {
        json_decref(joints);
        json_decref(left_out);
        return -1;
    }
    json_t *root = json_pack("{s:i, s:i, s:o, s:o}", "nq", mbd_model_nq(model), "nv",
                             mbd_model_nv(model), "joints", joints, "left_out", left_out);
    if (!root)
        return -1;
    json_dumpf(root, stdout, 0);
    putchar('\n');
    json_decref(root);
    return 0;
}

int cmd_info(const char *cmd, int argc, char **argv)
{
    cli_flag flags[] = {SWITCH("--json"), CLI_FLOATING_BASE, END_FLAGS};
    mbd_model *model;
    int rc = cli_open_model(cmd, argc, argv, flags, &model);
    if (rc)
        return rc;
    if (!cli_get(flags, "--json"))
        mbd_model_print(model, stdout);
    else if (print_info_json(model) < 0)
        rc = cli_fail(cmd, "--json", MBD_ENOMEM);
    mbd_model_free(model);
    return rc;
}
