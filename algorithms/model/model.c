/* model.c: a built model's getters, and freeing it. */
#include <stdlib.h>
#include <string.h>

#include "model/parts.h"

void mbd_model_free(mbd_model *model)
{
    if (!model)
        return;
    if (model->defs)
        for (int i = 0; i < model->nb; i++) {
            free((char *)model->defs[i].name);
            free((char *)model->defs[i].joint_name);
        }
    if (model->frames)
        for (int f = 0; f < model->nframes; f++) {
            free((char *)model->frames[f].name);
            free((char *)model->frames[f].joint_name);
        }
    free(model->defs);
    free(model->frames);
    free(model->name);
    free(model->source);
    free(model->parent);
    free(model->last_child);
    free(model->q0);
    free(model->v0);
    free(model->d0);
    free(model->joint);
    free(model->Xtree);
    free(model->tree_form);
    free(model->sum_slot);
    free(model->motion_slot);
    free(model->joint_type);
    free(model->inertia);
    free(model->free_body_inverse);
    free(model->user_rotation);
    free_passive(model);
    free(model->left_out);
    model_free_loops(model);
    free(model);
}

/* ---- accessors ---- */

const char *mbd_model_name(const mbd_model *model) { return model->name; }
int mbd_model_nbodies(const mbd_model *model) { return model->nb; }
int mbd_model_nq(const mbd_model *model) { return model->nq; }
int mbd_model_nv(const mbd_model *model) { return model->nv; }

const mbd_body_def *mbd_model_body(const mbd_model *model, int body)
{
    return body >= 0 && body < model->nb ? &model->defs[body] : NULL;
}

void mbd_model_gravity(const mbd_model *model, double gravity[3])
{
    memcpy(gravity, model->gravity, sizeof model->gravity);
}

int mbd_model_has_friction(const mbd_model *model) { return model->has_friction; }
int mbd_model_has_passive(const mbd_model *model)
{
    return model->has_passive || model->armature != NULL;
}
int mbd_model_ntendons(const mbd_model *model) { return model->ntendons; }
const char *mbd_model_left_out(const mbd_model *model) { return model->left_out; }

int model_set_left_out(mbd_model *model, const char *text)
{
    free(model->left_out);
    model->left_out = strdup(text);
    return model->left_out ? 0 : -1;
}

const mbd_tendon_def *mbd_model_tendon(const mbd_model *model, int tendon)
{
    return tendon >= 0 && tendon < model->ntendons ? &model->tendons[tendon] : NULL;
}
int mbd_model_nframes(const mbd_model *model) { return model->nframes; }

const mbd_frame_def *mbd_model_frame(const mbd_model *model, int frame)
{
    return frame >= 0 && frame < model->nframes ? &model->frames[frame] : NULL;
}

const char *mbd_model_joint_name(const mbd_model *model, int body)
{
    const mbd_body_def *b = mbd_model_body(model, body);
    return !b ? NULL : b->joint_name ? b->joint_name : b->name;
}

int mbd_model_nloops(const mbd_model *model) { return model->nloops; }
int mbd_model_nconstraints(const mbd_model *model) { return model->nc; }

const mbd_loop_def *mbd_model_loop(const mbd_model *model, int loop)
{
    return loop >= 0 && loop < model->nloops ? &model->loop_defs[loop] : NULL;
}
