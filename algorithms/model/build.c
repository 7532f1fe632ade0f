/* build.c: mbd_model_build: the description checked, fixed joints merged, the names
 * copied, then what the solvers precompute (topology.c, frames.c) and the loops (loops.c). */
#include <stdlib.h>
#include <string.h>

#include "model/parts.h"

static mbd_model *model_alloc(int n, int nframes)
{
    mbd_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->nb = n;
    m->nframes = nframes;
    const size_t count = (size_t)n;
    m->defs = calloc(count, sizeof *m->defs);
    m->frames = calloc((size_t)nframes + 1, sizeof *m->frames);
    m->parent = malloc(count * sizeof *m->parent);
    m->last_child = malloc(count * sizeof *m->last_child);
    m->sum_slot = malloc(count * sizeof *m->sum_slot);
    m->motion_slot = malloc(count * sizeof *m->motion_slot);
    m->q0 = malloc(count * sizeof *m->q0);
    m->v0 = malloc(count * sizeof *m->v0);
    m->d0 = malloc(count * sizeof *m->d0);
    m->joint = malloc(count * sizeof *m->joint);
    m->Xtree = malloc(count * sizeof *m->Xtree);
    m->tree_form = malloc(count * sizeof *m->tree_form);
    m->joint_type = malloc(count * sizeof *m->joint_type);
    m->inertia = malloc(count * sizeof *m->inertia);
    m->user_rotation = malloc(count * sizeof *m->user_rotation);
    if (!m->defs || !m->frames || !m->parent || !m->last_child || !m->sum_slot || !m->motion_slot ||
        !m->q0 || !m->v0 || !m->d0 || !m->joint || !m->Xtree || !m->tree_form || !m->joint_type ||
        !m->inertia || !m->user_rotation) {
        mbd_model_free(m);
        return NULL;
    }
    return m;
}

/* Replaces *s (the caller's) by the model's own copy; once a copy has failed, by NULL, so
 * that mbd_model_free frees only what the model owns. */
static void own_string(const char **s, int *failed)
{
    if (!*s)
        return;
    *s = *failed ? NULL : strdup(*s);
    *failed |= !*s;
}

/* Copies the header and takes the strings of the merged descriptions. */
static int own_descriptions(mbd_model *m, const char *source, const char *name,
                            const double gravity[3])
{
    m->name = strdup(name);
    m->source = strdup(source);
    memcpy(m->gravity, gravity, sizeof m->gravity);
    int failed = !m->name || !m->source;
    for (int i = 0; i < m->nb; i++) {
        own_string(&m->defs[i].name, &failed);
        own_string(&m->defs[i].joint_name, &failed);
    }
    for (int f = 0; f < m->nframes; f++) {
        own_string(&m->frames[f].name, &failed);
        own_string(&m->frames[f].joint_name, &failed);
    }
    return failed ? -1 : 0;
}

/* The tree of def's bodies, without loops; an mbd_status after a message. */
static int build_tree(const mbd_model_def *def, const char *source, const char *const *labels,
                      mbd_model **model, char *err, size_t err_size)
{
    int nfixed, nmoving, nframes;
    int status = check_model_header(def, err, err_size);
    if (status == MBD_OK)
        status = check_input(def, labels, err, err_size, &nfixed);
    if (status == MBD_OK)
        status = check_tendons(def, err, err_size);
    if (status != MBD_OK)
        return status;
    mbd_model *m = model_alloc(def->nbodies - nfixed, nfixed);
    int *from = malloc((size_t)def->nbodies * sizeof *from);
    status = m && from ? model_merge_fixed(def->bodies, def->nbodies, m->defs, from, m->frames,
                                           &nmoving, &nframes)
                       : -1;
    if (status == 0 && check_moving(m, def, labels, from, err, err_size) < 0)
        status = -2;
    else if (status == 0 &&
             (own_descriptions(m, source, def->name, def->gravity) < 0 || fill_topology(m) < 0))
        status = -1;
    if (status == 0) {
        fill_geometry(m);
        status = fill_passive(m, def, from);
    }
    if (status == 0)
        status = fill_free_body_inverses(m);
    free(from);
    if (status == -1)
        model_error(err, err_size, "out of memory for %d bodies", def->nbodies);
    if (status < 0) {
        if (m && status == -2) /* the names are still the caller's */
            m->nb = m->nframes = 0;
        mbd_model_free(m);
        return status == -1 ? MBD_ENOMEM : MBD_EPARSE;
    }
    *model = m;
    return MBD_OK;
}

int model_build_labelled(const mbd_model_def *def, const char *source, const char *const *labels,
                         mbd_model **model, char *err, size_t err_size)
{
    if (model)
        *model = NULL;
    if (!def || !model) {
        model_error(err, err_size, "model: expected a description and a place for the model");
        return MBD_EINVAL;
    }
    mbd_model *m = NULL;
    int status = build_tree(def, source, labels, &m, err, err_size);
    if (status == MBD_OK && def->nloops != 0)
        status = model_close_loops(m, def, err, err_size);
    if (status != MBD_OK) {
        mbd_model_free(m);
        return status;
    }
    *model = m;
    return MBD_OK;
}

int mbd_model_build(const mbd_model_def *def, mbd_model **model, char *err, size_t err_size)
{
    return model_build_labelled(def, "(built in memory)", NULL, model, err, err_size);
}
