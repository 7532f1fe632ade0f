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

/* n lanes at *used lanes into block (block NULL: only counts them). */
static lane *LANE_FN(take)(lane *block, size_t *used, size_t n)
{
    lane *p = block ? block + *used : NULL;
    *used += n;
    return p;
}

/* Points work's arrays into block, or with block NULL only counts them: the lanes used. */
static size_t LANE_FN(lay_out)(lane_work *work, lane *block, const mbd_model *model, size_t scratch)
{
    const size_t nb = (size_t)model->nb, nq = (size_t)model->nq, nv = (size_t)model->nv;
    const size_t per_xform = sizeof(lane_xform) / sizeof(lane), per_inertia = sizeof(lane_inertia) / sizeof(lane);
    size_t used = 0;
    work->X = (lane_xform *)LANE_FN(take)(block, &used, nb * per_xform);
    work->IA = (lane_inertia *)LANE_FN(take)(block, &used, nb * per_inertia);
    work->inertia = (lane_inertia *)LANE_FN(take)(block, &used, nb * per_inertia);
    work->S = LANE_FN(take)(block, &used, 6 * nv);
    work->U = LANE_FN(take)(block, &used, 6 * nv);
    work->D = LANE_FN(take)(block, &used, (size_t)model->ndd);
    work->u = LANE_FN(take)(block, &used, nv);
    work->v = (lane (*)[6])LANE_FN(take)(block, &used, 6 * nb);
    work->c = (lane (*)[6])LANE_FN(take)(block, &used, 6 * nb);
    work->a = (lane (*)[6])LANE_FN(take)(block, &used, 6 * nb);
    work->f = (lane (*)[6])LANE_FN(take)(block, &used, 6 * nb);
    work->g = (lane (*)[6])LANE_FN(take)(block, &used, 6 * nb);
    work->scratch = LANE_FN(take)(block, &used, scratch);
    work->q = LANE_FN(take)(block, &used, nq);
    work->x = LANE_FN(take)(block, &used, nv);
    work->tau = LANE_FN(take)(block, &used, nv);
    work->y = LANE_FN(take)(block, &used, nv);
    work->z = LANE_FN(take)(block, &used, nv);
    return used;
}

/* The lane workspace of a model and solver: one 64-byte-aligned block, X first. */
static void *LANE_FN(lane_work_new)(const mbd_model *model, const mbd_solver *solver)
{
    const size_t scratch = solver->scratch_doubles ? solver->scratch_doubles(model) : 0;
    lane_work *work = calloc(1, sizeof *work);
    if (!work)
        return NULL;
    const size_t bytes = LANE_FN(lay_out)(work, NULL, model, scratch) * sizeof(lane);
    lane *block = aligned_alloc(64, (bytes + 63) / 64 * 64); /* whole lines */
    if (!block) {
        free(work);
        return NULL;
    }
    LANE_FN(lay_out)(work, block, model, scratch);
    work->solver = solver;
    for (int i = 0; i < model->nb; i++)
        LANE_FN(inertia_load)(&work->inertia[i], &model->inertia[i]);
    LANE_FN(constant_subspaces)(model, work->S);
    return work;
}

static void LANE_FN(lane_work_free)(void *opaque)
{
    lane_work *work = opaque;
    if (work)
        free(work->X);
    free(work);
}

/* Lane w of out[j] = entry j of row row[w] (rows of n doubles). */
static void LANE_FN(gather)(lane *out, const double *rows, int n, const int *row)
{
    for (int j = 0; j < n; j++)
        for (int w = 0; w < MBD_LANES; w++)
            out[j][w] = rows[(size_t)row[w] * (size_t)n + (size_t)j];
}

/* Row w's entry j = lane w of in[j], for the count rows not in skip; returns the mask of
 * the rows that got a non-finite entry. */
static unsigned LANE_FN(scatter)(double *rows, const lane *in, int n, int count, unsigned skip)
{
    unsigned bad = 0;
    for (int w = 0; w < count; w++)
        for (int j = 0; j < n && !(skip >> w & 1); j++) {
            rows[(size_t)w * (size_t)n + (size_t)j] = in[j][w];
            if (!isfinite(in[j][w]))
                bad |= 1u << w;
        }
    return bad;
}

/* The group's states in (x: qd or p; z NULL in the acceleration form), its results out:
 * see mbd_lane_form. */
static unsigned LANE_FN(lanes_solve)(const mbd_model *model, void *opaque, int count,
                                     unsigned skip, const double *q, const double *x,
                                     const double *tau, double *y, double *z)
{
    lane_work *work = opaque;
    const unsigned solved = ((1u << count) - 1) & ~skip;
    if (!solved)
        return 0;
    const int nv = model->nv, first = __builtin_ctz(solved);
    int row[MBD_LANES];
    for (int w = 0; w < MBD_LANES; w++)
        row[w] = solved >> w & 1 ? w : first;
    LANE_FN(gather)(work->q, q, model->nq, row);
    LANE_FN(gather)(work->x, x, nv, row);
    if (tau)
        LANE_FN(gather)(work->tau, tau, nv, row);
    LANE_FN(tree_kinematics)(model, work, work->q);
    const lane *tau_lanes = tau ? work->tau : NULL;
    const int status =
        !z                                           ? LANE_FN(bodies_acc)(model, work, work->x, tau_lanes, work->y)
        : work->solver == &mbd_solver_poisson_ldlt ? LANE_FN(ldlt_mom)(model, work, work->x, tau_lanes, work->y, work->z)
                                                     : LANE_FN(sweep_mom)(model, work, work->x, tau_lanes, work->y, work->z);
    if (status)
        return solved;
    unsigned failed = LANE_FN(scatter)(y, work->y, nv, count, skip);
    if (z)
        failed |= LANE_FN(scatter)(z, work->z, nv, count, skip);
    return failed;
}

const mbd_lane_form LANE_FN(mbd_lane_form) = {
    .lanes = MBD_LANES,
    .work_new = LANE_FN(lane_work_new),
    .work_free = LANE_FN(lane_work_free),
    .solve = LANE_FN(lanes_solve),
};
