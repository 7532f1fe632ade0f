/* batch.h: the lane forms of the solvers (batch_x4.c, batch_x8.c), which batch.c runs
 * over many states. Not installed. */
#ifndef MBD_BATCH_H
#define MBD_BATCH_H

#include "solvers/solvers.h"

/* The lane form of the solvers of one width W: a group of count <= W states (rows as in
 * mbd_batch_forward) in lockstep, one per lane. solve runs the workspace's solver: bodies
 * (z NULL: x is qd, y qdd), poisson-ldlt or poisson-sweep (x is p, y qd, z pd) on the
 * states not in the mask skip whose inputs are finite (the others' lanes, and those past
 * count, compute a copy of a solved state, so that what a lane computes never depends on
 * its neighbours), writes their results, and returns the mask of those it could not
 * solve (a non-finite input or result; all of them at a singular joint block in any
 * lane): the caller solves those one at a time, which gives each its own status.
 * next_count: how many states after the group's the caller solves in its next call (0:
 * some other), which the bodies sweep starts within this one (bodies_lanes,
 * batch_lanes.h); ahead: how many states follow the group in the arrays (0: none to
 * fetch), whose rows it brings into the cache while it computes (prefetch_next, lane.h). */
typedef struct {
    int lanes;
    void *(*work_new)(const mbd_model *model, const mbd_solver *solver);
    void (*work_free)(void *work);
    unsigned (*solve)(const mbd_model *model, void *work, int count, unsigned skip, const double *q,
                      const double *x, const double *tau, double *y, double *z, int next_count,
                      int ahead);
} mbd_lane_form;
extern const mbd_lane_form mbd_lane_form_x4, mbd_lane_form_x8;

#endif
