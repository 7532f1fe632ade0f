/* batch_lanes.h: a lane group of a batch, W states in lockstep (one per lane): the
 * workspace, the transposition of the group's rows into lanes and back, and the lane forms
 * of the solvers (mbd_lane_form, batch.h). Instantiated by batch_x4.c and batch_x8.c
 * between lane.h and lane_end.h, after the kernel headers. */

/* Points work's arrays into base (NULL: only measures; carve, dynamics.h), X first;
 * returns the block's bytes. */
static size_t LANE_FN(lay_out)(lane_work *work, char *base, const mbd_model *model, size_t scratch)
{
    const size_t nq = (size_t)model->nq, nv = (size_t)model->nv;
    carved_block block = {.base = base};
#define CARVE_LANE_ARRAY(field, count) CARVE_ARRAY(&block, work, field, count);
    MBD_LANE_ARRAYS(CARVE_LANE_ARRAY, model)
    CARVE_LANE_ARRAY(mass_moments, model->nb)
    CARVE_LANE_ARRAY(scratch, scratch)
    CARVE_LANE_ARRAY(q, nq)
    CARVE_LANE_ARRAY(x, nv)
    CARVE_LANE_ARRAY(tau, nv)
    CARVE_LANE_ARRAY(y, nv)
    CARVE_LANE_ARRAY(z, nv)
#undef CARVE_LANE_ARRAY
    return block.used;
}

/* A thread's lane workspace, and what it holds of the group that the thread solves next:
 * its rows (their q; NULL: nothing), its states and those of them with a non-finite
 * input, whose first pass the bodies sweep ran within the last pass of the group before
 * (bodies_lanes). */
typedef struct {
    lane_work work;
    const double *prepared_q;
    unsigned prepared_states, prepared_bad;
} LANE_FN(group_work);

/* The lane workspace of a model and solver: one 64-byte-aligned block, X first. */
static void *LANE_FN(group_work_new)(const mbd_model *model, const mbd_solver *solver)
{
    const size_t scratch = solver->scratch_doubles ? solver->scratch_doubles(model) : 0;
    LANE_FN(group_work) *group = calloc(1, sizeof *group);
    if (!group)
        return NULL;
    lane_work *work = &group->work;
    const size_t bytes = LANE_FN(lay_out)(work, NULL, model, scratch);
    char *block = aligned_alloc(64, bytes);
    if (!block) {
        free(group);
        return NULL;
    }
    LANE_FN(lay_out)(work, block, model, scratch);
    work->solver = solver;
    LANE_FN(constant_kinematics)(model, work);
    return group;
}

static void LANE_FN(group_work_free)(void *opaque)
{
    LANE_FN(group_work) *group = opaque;
    if (group)
        free(group->work.X);
    free(group);
}

/* A tally of entries that is NaN in the lanes where one was not finite: x * 0 is NaN for
 * an infinity or NaN, and a NaN stays in a sum. One multiply-add per entry, into 4 sums
 * that do not wait on each other, instead of a comparison and a mask (at N = 10 the
 * gather's tests took 2% of a batch). */
typedef struct {
    lane sum[4];
} LANE_FN(finite_tally);

MBD_INLINE void LANE_FN(tally_start)(LANE_FN(finite_tally) *tally)
{
    for (int k = 0; k < 4; k++)
        tally->sum[k] = LANE_FN(lane_splat)(0.0);
}

/* Entry j of the tally is x. */
MBD_INLINE void LANE_FN(tally_add)(LANE_FN(finite_tally) *tally, int j, lane x)
{
    tally->sum[j % 4] += x * 0.0;
}

/* The mask of the lanes where an entry was not finite. */
MBD_INLINE unsigned LANE_FN(tally_nonfinite)(const LANE_FN(finite_tally) *tally)
{
    const lane sum = (tally->sum[0] + tally->sum[1]) + (tally->sum[2] + tally->sum[3]);
    return LANE_FN(nan_lanes)(sum);
}

/* The mask of the lanes where some of in[0 .. n - 1] is not finite. Four entries a step,
 * each into its own sum: a sum picked by j at run time would live on the stack. */
static unsigned LANE_FN(nonfinite_lanes)(const lane *in, int n)
{
    LANE_FN(finite_tally) tally;
    LANE_FN(tally_start)(&tally);
    int j = 0;
    for (; j + 4 <= n; j += 4)
        for (int k = 0; k < 4; k++)
            LANE_FN(tally_add)(&tally, k, in[j + k]);
    for (; j < n; j++)
        LANE_FN(tally_add)(&tally, 0, in[j]);
    return LANE_FN(tally_nonfinite)(&tally);
}

/* Lane w of out[j] = entry j of row row[w] (rows of n doubles), W entries at a time
 * transposed in registers; returns the mask of the lanes that got a non-finite entry. */
static unsigned LANE_FN(gather)(lane *out, const double *rows, int n, const int *row)
{
    const double *from[MBD_LANES];
    for (int w = 0; w < MBD_LANES; w++)
        from[w] = rows + (size_t)row[w] * (size_t)n;
    LANE_FN(finite_tally) tally;
    LANE_FN(tally_start)(&tally);
    int j = 0;
    for (; j + MBD_LANES <= n; j += MBD_LANES) {
        lane m[MBD_LANES];
        for (int w = 0; w < MBD_LANES; w++)
            m[w] = *(const LANE_FN(row_chunk) *)(from[w] + j);
        LANE_FN(transpose)(m);
        for (int c = 0; c < MBD_LANES; c++) {
            out[j + c] = m[c];
            LANE_FN(tally_add)(&tally, c, m[c]);
        }
    }
    for (; j < n; j++) { /* tallied in sum 0: a sum picked by j lived on the stack */
        lane v;
        for (int w = 0; w < MBD_LANES; w++)
            v[w] = from[w][j];
        out[j] = v;
        LANE_FN(tally_add)(&tally, 0, v);
    }
    return LANE_FN(tally_nonfinite)(&tally);
}

/* The results' entries that scatter_ready has not written, from work->out_from on, out to
 * their rows (as gather, backwards). */
static void LANE_FN(scatter_rest)(const mbd_model *model, lane_work *work)
{
    LANE_FN(scatter_ready)(model, work, model->nb - 1);
    for (int o = 0; o < work->outs; o++)
        for (int j = work->out_from; j < model->nv; j++)
            for (int w = 0; w < MBD_LANES; w++)
                if (work->out_mask >> w & 1)
                    work->out[o].rows[(size_t)w * (size_t)model->nv + (size_t)j] =
                        work->out[o].lanes[j][w];
}

/* The states in the mask solved (not empty) into the lanes, each of the others' lanes a
 * copy of the first of them; returns the mask of those among solved with a non-finite
 * input. */
static unsigned LANE_FN(gather_states)(const mbd_model *model, lane_work *work, unsigned solved,
                                       const double *q, const double *x, const double *tau)
{
    const int first = __builtin_ctz(solved);
    int row[MBD_LANES];
    for (int w = 0; w < MBD_LANES; w++)
        row[w] = solved >> w & 1 ? w : first;
    unsigned bad =
        LANE_FN(gather)(work->q, q, model->nq, row) | LANE_FN(gather)(work->x, x, model->nv, row);
    if (tau)
        bad |= LANE_FN(gather)(work->tau, tau, model->nv, row);
    return bad & solved;
}

/* Where the rows that the group's next call reads and writes are, for prefetch_next, of
 * the ahead states that follow the group: the next group's (at most W states), or
 * pipelined (bodies_lanes) the reads of the group after it, since the next group's
 * are read within this call; the regions of lines of q, x, tau (read) and y, z
 * (written) that there are, and the lines of each per body that cover them in one pass. */
static void LANE_FN(plan_prefetch)(const mbd_model *model, lane_work *work, int ahead,
                                   int pipelined, const double *q, const double *x,
                                   const double *tau, const double *y, const double *z)
{
    const size_t nq = (size_t)model->nq, nv = (size_t)model->nv;
    const double *from[5] = {q, x, tau, y, z};
    size_t most = 0;
    work->next_regions = work->next_reads = 0;
    for (int r = 0; r < 5; r++) {
        const int lead = r < 3 && pipelined ? 2 : 1; /* groups ahead */
        const int left = ahead - (lead - 1) * MBD_LANES;
        const size_t rows = left < MBD_LANES ? (size_t)(left > 0 ? left : 0) : MBD_LANES;
        if (from[r] && rows) {
            const size_t n = r ? nv : nq, lines = (rows * n * sizeof(double) + 63) / 64;
            work->next[work->next_regions].at =
                (const char *)(from[r] + (size_t)lead * MBD_LANES * n);
            work->next[work->next_regions++].lines = lines;
            work->next_reads += r < 3;
            most = lines > most ? lines : most;
        }
    }
    work->next_step = (most + (size_t)model->nb - 1) / (size_t)model->nb;
}

/* The states in *solved into work's lanes; those with a non-finite input leave *solved
 * (and are gathered again without them, so that no lane computes one): returns their
 * mask. */
static unsigned LANE_FN(gather_solved)(const mbd_model *model, lane_work *work, unsigned *solved,
                                       const double *q, const double *x, const double *tau)
{
    const unsigned bad = LANE_FN(gather_states)(model, work, *solved, q, x, tau);
    if (bad) { /* rare */
        *solved &= ~bad;
        if (*solved)
            LANE_FN(gather_states)(model, work, *solved, q, x, tau);
    }
    return bad;
}

/* The bodies sweep of the group in the lanes (its first pass already done where
 * prepared). With next_count states after the group's rows to solve next, their rows come
 * into the lanes once the backward pass is done, and their first pass runs within the
 * last pass (bodies_acceleration_pass). */
static int LANE_FN(bodies_lanes)(const mbd_model *model, LANE_FN(group_work) *group, int prepared,
                                 int next_count, const double *q, const double *x,
                                 const double *tau)
{
    lane_work *work = &group->work;
    int pipelined = 0;
    if (!prepared)
        LANE_FN(bodies_velocity_pass)(model, work, work->q, work->x);
    const int status = LANE_FN(bodies_articulated_pass)(model, work, tau ? work->tau : NULL, 0);
    if (status)
        return status;
    if (next_count) {
        const size_t nq = (size_t)model->nq, nv = (size_t)model->nv;
        const unsigned states = (1u << next_count) - 1;
        unsigned solved = states;
        group->prepared_bad =
            LANE_FN(gather_solved)(model, work, &solved, q + MBD_LANES * nq, x + MBD_LANES * nv,
                                   tau ? tau + MBD_LANES * nv : NULL);
        if (solved) {
            group->prepared_q = q + MBD_LANES * nq;
            group->prepared_states = states;
            pipelined = 1;
        }
    }
    LANE_FN(bodies_acceleration_pass)(model, work, work->y, work->q, pipelined ? work->x : NULL);
    return MBD_OK;
}

/* The group's states in (x: qd or p; z NULL in the acceleration form), its results out:
 * see mbd_lane_form. A state with a non-finite input is left out like those in skip. */
static unsigned LANE_FN(lanes_solve)(const mbd_model *model, void *opaque, int count, unsigned skip,
                                     const double *q, const double *x, const double *tau, double *y,
                                     double *z, int next_count, int ahead)
{
    LANE_FN(group_work) *group = opaque;
    lane_work *work = &group->work;
    unsigned solved = ((1u << count) - 1) & ~skip, bad = 0;
    if (!solved)
        return 0;
    const int prepared = group->prepared_q == q && group->prepared_states == solved;
    group->prepared_q = NULL;
    if (prepared) {
        bad = group->prepared_bad;
        solved &= ~bad;
    } else if ((bad = LANE_FN(gather_solved)(model, work, &solved, q, x, tau), !solved))
        return bad;
    const int nv = model->nv, pipelined = !z && next_count; /* z NULL: the bodies sweep */
    const lane *tau_lanes = tau ? work->tau : NULL;
    LANE_FN(plan_prefetch)(model, work, ahead, pipelined, q, x, tau, y, z);
    if (z)
        LANE_FN(tree_kinematics)(model, work, work->q);
    work->out[0].rows = y, work->out[0].lanes = work->y;
    work->out[1].rows = z, work->out[1].lanes = work->z;
    work->outs = z ? 2 : 1, work->out_from = 0, work->out_mask = solved;
    const int status =
        !z ? LANE_FN(bodies_lanes)(model, group, prepared, next_count, q, x, tau)
        : work->solver->lane_kernels == LANES_POISSON_LDLT
            ? LANE_FN(ldlt_solve)(model, work, NULL, work->x, tau_lanes, work->y, work->z)
            : LANE_FN(sweep_solve)(model, work, NULL, work->x, tau_lanes, work->y, work->z);
    if (status)
        return solved | bad;
    LANE_FN(scatter_rest)(model, work);
    unsigned failed = LANE_FN(nonfinite_lanes)(work->y, nv);
    if (z)
        failed |= LANE_FN(nonfinite_lanes)(work->z, nv);
    return (failed & solved) | bad;
}

const mbd_lane_form LANE_FN(mbd_lane_form) = {
    .lanes = MBD_LANES,
    .work_new = LANE_FN(group_work_new),
    .work_free = LANE_FN(group_work_free),
    .solve = LANE_FN(lanes_solve),
};
