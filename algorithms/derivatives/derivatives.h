/* derivatives.h: the derivatives methods' rows (derivatives.c's table) and what the
 * methods share. Not installed. */
#ifndef MBD_DERIVATIVES_H
#define MBD_DERIVATIVES_H

#include "solvers/solvers.h"

extern const mbd_derivatives_method mbd_derivatives_analytic;
extern const mbd_derivatives_method mbd_derivatives_automatic;
extern const mbd_derivatives_method mbd_derivatives_finite_difference;

/* Hinv = H^-1 (nv x nv) after mbd_kinematics, from CRBA's H factored densely in L (nv x nv
 * scratch; derivatives/analytic.c). */
int inverse_by_factor(const mbd_model *model, mbd_work *work, double *L, double *Hinv);

#endif
