/* phases.h: one classic RK4 step split as Ivanov 2017 splits it (Figs. 1-2): the
 * integrator's own vector updates, position kinematics, and the solve. */
#ifndef MBD_BENCH_PHASES_H
#define MBD_BENCH_PHASES_H

#include "../src/timing.h"
#include "../src/workload.h"

typedef enum { PHASE_INTEGRATOR, PHASE_KINEMATICS, PHASE_SOLVE, PHASE_STEP, PHASE_COUNT } rk4_phase;

const char *rk4_phase_name(rk4_phase phase);

/* Times one phase of an RK4 step from w's state 0, per step, by step (timing_measure, or
 * one of its parts): 4 kinematics calls, 4 solves, or the stage and final updates;
 * PHASE_STEP is the whole step, to check that the parts add up. Needs nq == nv (the
 * update treats q as a vector). Returns 0 or a status. */
int rk4_measure(const workload *w, rk4_phase phase, const timing_options *options, timing_step step,
                timing_result *result);

#endif
