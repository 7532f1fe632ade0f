/* crba_kernels.h: the composite-rigid-body algorithm (RBDA section 6.2), one state, for
 * crba.c and the GPU's dense kernel (gpu_kernels.c), which include it after dynamics.h:
 * the joint-space mass matrix H.
 *
 *   leaves -> root:  I^C_i = I_i + sum_children X_j^T I^C_j X_j,
 *                    F = I^C_i S_i,  H_ii = S_i^T F (+ armature_i on its diagonal),
 *                    then for each ancestor j of i
 *                    (from i up): F <- X_j^T F,  H_{lambda(j), i} = S_lambda(j)^T F
 * O(N d), d the depth of the tree (O(N^2) for a chain), after mbd_kinematics. */
#ifndef MBD_CRBA_KERNELS_H
#define MBD_CRBA_KERNELS_H

/* I^C_i = I_i + sum_children X^T I^C_j X; H_ii = S_i^T I^C_i S_i; then F = I^C_i S_i is
 * carried towards the root: H_{lambda,i} = S_lambda^T (X^T F). Sets the lower triangle
 * of the row-major H (the upper triangle of the same array read column-major). */
MBD_INLINE void crba_lower(const mbd_model *model, mbd_work *work, double *H)
{
    const int nv = model->nv;
    memset(H, 0, (size_t)nv * (size_t)nv * sizeof *H); /* entries of unrelated bodies stay 0 */
    for (int i = model->nb - 1; i >= 0; i--) {
        const int ni = model->joint[i].nv, vi = model->v0[i];
        start_inertia_sum(model, work, i, 0);
        double F[MBD_MAX_JOINT_DOF][6], Ft[6];
        const mbd_joint_type type = model->joint_type[i];
        for (int k = 0; k < ni; k++)
            inertia_times_column(F[k], &work->IA[i], type, work->S + 6 * vi, k);
        for (int k = 0; k < ni; k++) {
            subspace_dot(H + (size_t)(vi + k) * nv + vi, type, work->S + 6 * vi, F[k]);
            if (joint_has_armature(model, i)) /* H + diag(armature) */
                H[(size_t)(vi + k) * nv + vi + k] += model->armature[i];
        }
        for (int j = i; model->parent[j] >= 0; j = model->parent[j]) {
            const int p = model->parent[j];
            for (int k = 0; k < ni; k++) {
                xform_force_t(Ft, &work->X[j], F[k]);
                memcpy(F[k], Ft, sizeof Ft);
                subspace_dot(H + (size_t)(vi + k) * nv + model->v0[p], model->joint_type[p],
                             work->S + 6 * model->v0[p], F[k]);
            }
        }
        if (model->parent[i] >= 0)
            carry_inertia(model, work, i, &work->IA[i], 0, 0, 0);
    }
}

#endif
