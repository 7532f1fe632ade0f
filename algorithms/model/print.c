/* print.c: mbd_model_print's text (solvers/workspace.c gives it the loops' rank): a built
 * model described, one line per body, frame and loop. */
#include "model/parts.h"

static const char *body_name(const mbd_model *model, int body)
{
    return body < 0 ? "world" : model->defs[body].name;
}

static void print_loops(const mbd_model *model, int rank, FILE *out)
{
    if (model->nloops == 0)
        return;
    fprintf(out, "%d loops, %d constraint equations", model->nloops, model->nc);
    if (rank >= 0)
        fprintf(out, "; at q = 0 Phi_q has rank %d: %d DOF (nv - rank)\n", rank, model->nv - rank);
    else
        fprintf(out, "; rank of Phi_q at q = 0 unavailable\n");
    for (int l = 0; l < model->nloops; l++) {
        const mbd_loop_def *def = &model->loop_defs[l];
        fprintf(out, "%6d %-12s %-9s %s - %s\n", l, def->name, mbd_loop_type_name(def->type),
                body_name(model, def->body_a), body_name(model, def->body_b));
    }
}

/* The joint's armature, damper and spring and the body's gravity compensation, where
 * given. */
static void print_passive(const mbd_passive *p, int nq, FILE *out)
{
    if (p->armature != 0.0)
        fprintf(out, ", armature %g", p->armature);
    if (p->damping != 0.0)
        fprintf(out, ", damping %g", p->damping);
    if (p->stiffness != 0.0) {
        char ref[200];
        model_format_values(ref, sizeof ref, 6, p->springref, 1, nq);
        fprintf(out, ", stiffness %g about %s", p->stiffness, ref);
    }
    if (p->gravcomp != 0.0)
        fprintf(out, ", gravcomp %g%s", p->gravcomp,
                p->actuator_gravcomp ? " (the joint's share by its actuator)" : "");
}

void model_print(const mbd_model *model, int loop_rank, FILE *out)
{
    char text[3][200];
    model_format_values(text[0], sizeof text[0], 6, model->gravity, 1, 3);
    fprintf(out, "model %s (from %s)\ngravity %s\n%d bodies, nq %d, nv %d\n", model->name,
            model->source, text[0], model->nb, model->nq, model->nv);
    for (int i = 0; i < model->nb; i++) {
        const mbd_body_def *b = &model->defs[i];
        const mbd_joint *j = &model->joint[i];
        double sym[9], moments[3];
        symmetrized(sym, &b->inertia[0][0]);
        symmetric3_eigenvalues(sym, moments);
        double axes[2][3]; /* the user's unit axes: Q_i turns the solvers' back */
        for (int k = 0; k < 2; k++)
            mat3_apply(axes[k], model->user_rotation[i], j->axis[k]);
        const int naxes = joint_type_naxes(j->type);
        if (naxes > 0)
            model_format_values(text[0], sizeof text[0], 6, &axes[0][0], naxes, 3);
        else
            snprintf(text[0], sizeof text[0], "(nq %d, nv %d)", j->nq, j->nv);
        model_format_values(text[1], sizeof text[1], 6, b->com, 1, 3);
        model_format_values(text[2], sizeof text[2], 6, moments, 1, 3);
        fprintf(out, "%6d %-12s parent %-12s %s %s, mass %g, com %s, principal moments %s", i,
                b->name, b->parent < 0 ? "world" : model->defs[b->parent].name,
                mbd_joint_type_name(j->type), text[0], b->mass, text[1], text[2]);
        const mbd_friction *fr = &b->friction;
        if (fr->coulomb > 0.0 || fr->viscous > 0.0)
            fprintf(out, ", friction coulomb %g radius %g viscous %g smoothing %g", fr->coulomb,
                    fr->radius, fr->viscous, fr->smoothing);
        print_passive(&b->passive, j->nq, out);
        fputc('\n', out);
    }
    for (int f = 0; f < model->nframes; f++) {
        const mbd_frame_def *fr = &model->frames[f];
        model_format_values(text[0], sizeof text[0], 6, fr->origin, 1, 3);
        fprintf(out, "frame %s (fixed joint %s) in %s at %s\n", fr->name,
                fr->joint_name ? fr->joint_name : fr->name,
                fr->body < 0 ? "world" : model->defs[fr->body].name, text[0]);
    }
    print_loops(model, loop_rank, out);
    for (int t = 0; t < model->ntendons; t++) {
        const mbd_tendon_def *tendon = &model->tendons[t];
        fprintf(out, "tendon %s: %d joints, stiffness %g, damping %g, spring length [%g, %g]\n",
                tendon->name ? tendon->name : "(unnamed)", tendon->ncoef, tendon->stiffness,
                tendon->damping, tendon->length_spring[0], tendon->length_spring[1]);
    }
    if (model->left_out)
        fprintf(out, "left out: %s\n", model->left_out);
}
