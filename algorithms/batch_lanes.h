/* batch_lanes.h: a lane group of a batch, W states in lockstep (one per lane): the
 * workspace, the transposition of the group's rows into lanes and back, and the lane forms
 * of the solvers (mbd_lane_form, internal.h). Instantiated by batch_x4.c and batch_x8.c
 * between lane.h and lane_end.h, after the kernel headers. */

/* Every lane of out = the one inertia I (a model's body, the same in every state). */
static void LANE_FN(inertia_load)(lane_inertia *restrict out, const mbd_inertia *I)
{
    for (int k = 0; k < 6; k++) {
        out->A[k] = LANE_FN(lane_splat)(I->A[k]);
        out->C[k] = LANE_FN(lane_splat)(I->C[k]);
    }
    for (int k = 0; k < 9; k++)
        out->B[k] = LANE_FN(lane_splat)(I->B[k]);
}

/* The lane arrays of lane_work, carved from one 64-byte-aligned block. */
static void *LANE_FN(lane_work_new)(const mbd_model *model, const mbd_solver *solver)
{
    const size_t nb = (size_t)model->nb, nq = (size_t)model->nq, nv = (size_t)model->nv;
    const size_t scratch = solver->scratch_doubles ? solver->scratch_doubles(model) : 0;
    const size_t lanes = nb * (sizeof(lane_xform) + 2 * sizeof(lane_inertia)) / sizeof(lane) +
                         12 * nv + (size_t)model->ndd + nv + 30 * nb + scratch + nq + 4 * nv;
    lane_work *work = calloc(1, sizeof *work);
    lane *block = aligned_alloc(64, (lanes * sizeof(lane) + 63) / 64 * 64); /* whole lines */
    if (!work || !block) {
        free(work);
        free(block);
        return NULL;
    }
    work->solver = solver;
    work->X = (lane_xform *)block;
    work->IA = (lane_inertia *)(work->X + nb);
    work->inertia = work->IA + nb;
    for (size_t i = 0; i < nb; i++)
        LANE_FN(inertia_load)(&work->inertia[i], &model->inertia[i]);
    lane *next = (lane *)(work->inertia + nb);
    lane **arrays[] = {&work->S, &work->U, &work->D, &work->u, (lane **)&work->v,
                       (lane **)&work->c, (lane **)&work->a, (lane **)&work->f,
                       (lane **)&work->g, &work->scratch, &work->q, &work->x, &work->tau,
                       &work->y, &work->z};
    const size_t sizes[] = {6 * nv, 6 * nv, (size_t)model->ndd, nv, 6 * nb, 6 * nb, 6 * nb,
                            6 * nb, 6 * nb, scratch, nq, nv, nv, nv, nv};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        *arrays[k] = next;
        next += sizes[k];
    }
    return work;
}

static void LANE_FN(lane_work_free)(void *opaque)
{
    lane_work *work = opaque;
    if (work)
        free(work->X);
    free(work);
}

/* Lane w of out[j] = row w's entry j (rows of n doubles, count of them); the lanes past
 * count repeat row 0, so that they compute a valid state. Nonzero if an entry is not
 * finite. */
static int LANE_FN(gather)(lane *out, const double *rows, int n, int count)
{
    int bad = 0;
    for (int j = 0; j < n; j++)
        for (int w = 0; w < MBD_LANES; w++) {
            out[j][w] = rows[(size_t)(w < count ? w : 0) * (size_t)n + (size_t)j];
            bad |= !isfinite(out[j][w]);
        }
    return bad;
}

/* Row w's entry j = lane w of in[j], for the count rows; returns the mask of the rows that
 * got a non-finite entry. */
static unsigned LANE_FN(scatter)(double *rows, const lane *in, int n, int count)
{
    unsigned bad = 0;
    for (int w = 0; w < count; w++)
        for (int j = 0; j < n; j++) {
            rows[(size_t)w * (size_t)n + (size_t)j] = in[j][w];
            if (!isfinite(in[j][w]))
                bad |= 1u << w;
        }
    return bad;
}

/* The group's states in (x: qd or p; z NULL in the acceleration form), its results out.
 * Returns the mask of the states whose result is not to be trusted and must be solved one
 * at a time (all of them on a non-finite input or a singular joint block in any lane). */
static unsigned LANE_FN(lanes_solve)(const mbd_model *model, void *opaque, int count,
                                     const double *q, const double *x, const double *tau,
                                     double *y, double *z)
{
    lane_work *work = opaque;
    const unsigned all = (1u << count) - 1;
    const int nv = model->nv;
    int bad = LANE_FN(gather)(work->q, q, model->nq, count) |
              LANE_FN(gather)(work->x, x, nv, count) |
              (tau && LANE_FN(gather)(work->tau, tau, nv, count));
    if (bad)
        return all;
    LANE_FN(tree_kinematics)(model, work, work->q);
    const lane *tau_lanes = tau ? work->tau : NULL;
    const int status =
        !z                                           ? LANE_FN(bodies_acc)(model, work, work->x, tau_lanes, work->y)
        : work->solver == &mbd_solver_poisson_ldlt ? LANE_FN(ldlt_mom)(model, work, work->x, tau_lanes, work->y, work->z)
                                                     : LANE_FN(sweep_mom)(model, work, work->x, tau_lanes, work->y, work->z);
    if (status)
        return all;
    unsigned failed = LANE_FN(scatter)(y, work->y, nv, count);
    if (z)
        failed |= LANE_FN(scatter)(z, work->z, nv, count);
    return failed;
}

const mbd_lane_form LANE_FN(mbd_lane_form) = {
    .lanes = MBD_LANES,
    .work_new = LANE_FN(lane_work_new),
    .work_free = LANE_FN(lane_work_free),
    .solve = LANE_FN(lanes_solve),
};
