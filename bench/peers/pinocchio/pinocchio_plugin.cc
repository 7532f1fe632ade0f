/* pinocchio_plugin.cc: Pinocchio (Carpentier et al., the pin package of PyPI) as two
 * solver plugins (include/mbd_plugin.h, docs/plugins.md), so that mbd and mbd-bench run
 * and time it on the same models and states as our own solvers:
 *
 *   pinocchio-aba   pinocchio::aba, the articulated-body algorithm; its derivatives
 *                   (ABI 2), pinocchio::computeABADerivatives (Carpentier and Mansard,
 *                   "Analytical derivatives of rigid body dynamics algorithms", 2018)
 *   pinocchio-crba  pinocchio::crba + nonLinearEffects, then pinocchio::cholesky
 *
 * Each work builds a pinocchio::Model from the mbd_model's bodies (mbd_model_body), so
 * every model mbd reads (JSON, URDF, MJCF, generators) maps, whatever its file. Joints:
 * revolute and prismatic as Pinocchio's (aligned where the axis is +x, +y or +z),
 * spherical and free as its spherical and free-flyer joints (coordinates and velocities
 * permuted), cylindrical and Cardan as two joints with a massless body between them.
 * Armature goes into model.armature; the passive forces come inside tau (mbd_forward adds
 * them before it calls a plugin); friction is refused by the host, and loops are left open
 * as every mbd_forward leaves them. */
#include "mbd_plugin.h"

#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/cholesky.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

using pinocchio::JointIndex;
using pinocchio::SE3;
using Eigen::Vector3d;
using Eigen::VectorXd;

/* One mbd body's coordinates and velocities in Pinocchio's vectors. */
struct BodySlot {
    mbd_joint_type type;
    int mbd_q, mbd_v; /* offsets in mbd's q and v */
    int pin_q, pin_v; /* offsets in Pinocchio's (its first joint's, for two) */
};

struct PinWork {
    int refused; /* MBD_OK, or what every call returns (work_new's refusal of the model) */
    pinocchio::Model model;
    pinocchio::Data data;
    std::vector<BodySlot> slots;
    /* mbd's velocity i is Pinocchio's pin_of[i]: the same order within a joint but a free
     * joint's, whose (angular; linear) is Pinocchio's (linear; angular) */
    std::vector<int> pin_of;
    VectorXd q, v, tau;
};

Vector3d vec3(const double a[3]) { return Vector3d(a[0], a[1], a[2]); }

/* A Pinocchio inertia from mbd's mass, centre of mass and inertia about it (body axes). */
pinocchio::Inertia body_inertia(const mbd_body_def &b)
{
    Eigen::Matrix3d inertia;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            inertia(i, j) = b.inertia[i][j];
    return pinocchio::Inertia(b.mass, vec3(b.com), pinocchio::Symmetric3(inertia));
}

/* Pinocchio's aligned joint where the unit axis is +x, +y or +z (its cheaper kernels),
 * else the unaligned one. */
template <class X, class Y, class Z, class Unaligned>
pinocchio::JointModel axis_joint(const Vector3d &axis)
{
    if (axis == Vector3d::UnitX())
        return X();
    if (axis == Vector3d::UnitY())
        return Y();
    if (axis == Vector3d::UnitZ())
        return Z();
    return Unaligned(axis);
}

pinocchio::JointModel revolute(const double a[3])
{
    return axis_joint<pinocchio::JointModelRX, pinocchio::JointModelRY, pinocchio::JointModelRZ,
                      pinocchio::JointModelRevoluteUnaligned>(vec3(a).normalized());
}

pinocchio::JointModel prismatic(const double a[3])
{
    return axis_joint<pinocchio::JointModelPX, pinocchio::JointModelPY, pinocchio::JointModelPZ,
                      pinocchio::JointModelPrismaticUnaligned>(vec3(a).normalized());
}

/* The body's joint (two for cylindrical and Cardan: the first joint at the joint frame,
 * the second at the massless body between them), its inertia on the last one; the last
 * joint's index, which the body's children hang from. */
JointIndex add_body(pinocchio::Model &model, JointIndex parent, const mbd_body_def &b)
{
    Eigen::Matrix3d rotation;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            rotation(i, j) = b.rotation[i][j];
    const SE3 placement(rotation, vec3(b.origin));
    const std::string name(b.name ? b.name : "body");
    JointIndex joint;
    switch (b.joint) {
    case MBD_REVOLUTE:
        joint = model.addJoint(parent, revolute(b.axes[0]), placement, name);
        break;
    case MBD_PRISMATIC:
        joint = model.addJoint(parent, prismatic(b.axes[0]), placement, name);
        break;
    case MBD_SPHERICAL:
        joint = model.addJoint(parent, pinocchio::JointModelSpherical(), placement, name);
        break;
    case MBD_FREE:
        joint = model.addJoint(parent, pinocchio::JointModelFreeFlyer(), placement, name);
        break;
    case MBD_CYLINDRICAL: /* the slide along the axis that the rotation keeps */
        joint = model.addJoint(parent, revolute(b.axes[0]), placement, name + ":turn");
        joint = model.addJoint(joint, prismatic(b.axes[0]), SE3::Identity(), name);
        break;
    case MBD_CARDAN: /* R = Rot(a1, q1) Rot(a2, q2): a2 turns in the rotated frame */
        joint = model.addJoint(parent, revolute(b.axes[0]), placement, name + ":1");
        joint = model.addJoint(joint, revolute(b.axes[1]), SE3::Identity(), name);
        break;
    default:
        throw std::invalid_argument("joint type");
    }
    model.appendBodyToJoint(joint, body_inertia(b), SE3::Identity());
    return joint;
}

/* The velocities of an mbd joint (those of both Pinocchio joints for two). */
int joint_nv(mbd_joint_type type)
{
    switch (type) {
    case MBD_FREE:
        return 6;
    case MBD_SPHERICAL:
        return 3;
    case MBD_CYLINDRICAL:
    case MBD_CARDAN:
        return 2;
    default:
        return 1;
    }
}

/* The bodies depth first (each subtree's after its root, before the next subtree): the
 * order of joints that Pinocchio's CRBA and Cholesky need (model.check(data)); mbd's
 * bodies need only come after their parents. */
std::vector<int> depth_first(const mbd_model *m)
{
    const int nb = mbd_model_nbodies(m);
    std::vector<std::vector<int>> children(nb + 1); /* children[nb]: the world's */
    for (int i = 0; i < nb; i++) {
        const int parent = mbd_model_body(m, i)->parent;
        children[parent < 0 ? nb : parent].push_back(i);
    }
    std::vector<int> order, stack(children[nb].rbegin(), children[nb].rend());
    while (!stack.empty()) {
        const int i = stack.back();
        stack.pop_back();
        order.push_back(i);
        stack.insert(stack.end(), children[i].rbegin(), children[i].rend());
    }
    return order;
}

/* The Pinocchio model of the mbd_model, and where each body's coordinates lie in it. */
void build(const mbd_model *m, PinWork &w)
{
    const int nb = mbd_model_nbodies(m);
    std::vector<int> mbd_q(nb), mbd_v(nb);
    for (int i = 0, iq = 0, iv = 0; i < nb; i++) {
        const mbd_joint_type type = mbd_model_body(m, i)->joint;
        mbd_q[i] = iq, mbd_v[i] = iv;
        iq += type == MBD_FREE ? 7 : type == MBD_SPHERICAL ? 4 : joint_nv(type);
        iv += joint_nv(type);
    }
    std::vector<JointIndex> joint_of(nb);
    for (const int i : depth_first(m)) {
        const mbd_body_def &b = *mbd_model_body(m, i);
        const JointIndex parent = b.parent < 0 ? 0 : joint_of[b.parent];
        const int pin_q = w.model.nq, pin_v = w.model.nv;
        joint_of[i] = add_body(w.model, parent, b);
        /* armature on each of the joint's velocities (H + diag(armature)), as mbd's */
        w.model.armature.tail(w.model.nv - pin_v).setConstant(b.passive.armature);
        w.slots.push_back({b.joint, mbd_q[i], mbd_v[i], pin_q, pin_v});
    }
    w.pin_of.resize(w.model.nv);
    for (const BodySlot &s : w.slots)
        for (int k = 0; k < joint_nv(s.type); k++)
            w.pin_of[s.mbd_v + k] = s.pin_v + (s.type == MBD_FREE ? (k + 3) % 6 : k);
    double g[3];
    mbd_model_gravity(m, g);
    w.model.gravity = pinocchio::Motion(vec3(g), Vector3d::Zero());
    w.data = pinocchio::Data(w.model);
    w.q.resize(w.model.nq);
    w.v.resize(w.model.nv);
    w.tau.resize(w.model.nv);
}

/* mbd's quaternion (w, x, y, z) at src as Pinocchio's (x, y, z, w) at dst, made unit
 * (mbd's solvers take any non-zero quaternion as quat / |quat|). */
void quaternion_to_pin(const double *src, double *dst)
{
    const double n =
        std::sqrt(src[0] * src[0] + src[1] * src[1] + src[2] * src[2] + src[3] * src[3]);
    dst[0] = src[1] / n, dst[1] = src[2] / n, dst[2] = src[3] / n, dst[3] = src[0] / n;
}

/* mbd's q, qd and tau into Pinocchio's order (tau NULL: zero). */
void to_pin(PinWork &w, const double *q, const double *qd, const double *tau)
{
    for (const BodySlot &s : w.slots) {
        const double *mq = q + s.mbd_q;
        double *pq = w.q.data() + s.pin_q;
        if (s.type == MBD_FREE) {
            std::copy(mq, mq + 3, pq);
            quaternion_to_pin(mq + 3, pq + 3);
        } else if (s.type == MBD_SPHERICAL) {
            quaternion_to_pin(mq, pq);
        } else {
            std::copy(mq, mq + joint_nv(s.type), pq);
        }
    }
    for (int i = 0; i < w.model.nv; i++) {
        w.v[w.pin_of[i]] = qd[i];
        w.tau[w.pin_of[i]] = tau ? tau[i] : 0.0;
    }
}

/* Pinocchio's accelerations a into mbd's qdd. */
void from_pin(const PinWork &w, const VectorXd &a, double *qdd)
{
    for (int i = 0; i < w.model.nv; i++)
        qdd[i] = a[w.pin_of[i]];
}

/* Pinocchio's nv x nv derivative D into mbd's out (row-major), rows and columns mapped:
 * row i is qdd_i, column j mbd's velocity j. Pinocchio's q-columns are along its
 * integrate, q (+) delta with a free joint's SE(3) step M exp6(v, w) and a spherical
 * joint's R exp3(w), both in the body frame: to first order (all a derivative sees) mbd's
 * step p + R v_O, R exp(w) of mbd_integrate_positions, so its columns map as the
 * velocities do. */
void matrix_from_pin(const PinWork &w, const Eigen::MatrixXd &D, double *out)
{
    const int nv = w.model.nv;
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++)
            out[i * nv + j] = D(w.pin_of[i], w.pin_of[j]);
}

/* pinocchio::Data allocates and zeroes, whatever the algorithm, four nv x nv x nv tensors
 * (the second-order RNEA derivatives d2tau_dqdq, _dvdv, _dqdv, _dadq): 23 GB at nv = 900,
 * a chain of 300 spherical joints. Models whose tensors would pass this are refused. */
constexpr double max_tensor_bytes = 1 << 30;

void *work_new(const mbd_model *model)
{
    PinWork *w = nullptr;
    try {
        w = new PinWork();
        const double nv = mbd_model_nv(model);
        const double tensor_bytes = 4 * nv * nv * nv * sizeof(double);
        if (tensor_bytes > max_tensor_bytes) {
            std::fprintf(stderr,
                         "pinocchio plugin: %s: nv = %d: pinocchio::Data would hold %.1f GB of "
                         "second-order derivative tensors (4 nv^3 doubles); refused above 1 GiB\n",
                         mbd_model_name(model), (int)nv, tensor_bytes / 1e9);
            w->refused = MBD_ELIMIT;
            return w;
        }
        build(model, *w);
        return w;
    } catch (...) { /* no exception may cross into C: NULL is the ABI's out of memory */
        delete w;
        return nullptr;
    }
}

void work_free(void *work) { delete static_cast<PinWork *>(work); }

int forward_aba(const mbd_model *, void *work, const double *q, const double *qd, const double *tau,
                double *qdd)
{
    PinWork &w = *static_cast<PinWork *>(work);
    if (w.refused)
        return w.refused;
    try {
        to_pin(w, q, qd, tau);
        from_pin(w, pinocchio::aba(w.model, w.data, w.q, w.v, w.tau), qdd);
        return MBD_OK;
    } catch (...) {
        return MBD_EINVAL;
    }
}

/* H qdd = tau - C(q, qd): H by CRBA (its upper triangle, armature added), C by RNEA at
 * qdd = 0, H = U D U^T by Pinocchio's tree-sparse Cholesky. */
int forward_crba(const mbd_model *, void *work, const double *q, const double *qd,
                 const double *tau, double *qdd)
{
    PinWork &w = *static_cast<PinWork *>(work);
    if (w.refused)
        return w.refused;
    try {
        to_pin(w, q, qd, tau);
        pinocchio::crba(w.model, w.data, w.q);
        w.tau -= pinocchio::nonLinearEffects(w.model, w.data, w.q, w.v);
        pinocchio::cholesky::decompose(w.model, w.data);
        pinocchio::cholesky::solve(w.model, w.data, w.tau);
        from_pin(w, w.tau, qdd);
        return MBD_OK;
    } catch (...) {
        return MBD_EINVAL;
    }
}

/* dqdd/dq, dqdd/dqd, dqdd/dtau = H^-1 by computeABADerivatives, which writes H^-1's upper
 * triangle only. */
int derivatives_aba(const mbd_model *, void *work, const double *q, const double *qd,
                    const double *tau, double *dqdd_dq, double *dqdd_dqd, double *dqdd_dtau)
{
    PinWork &w = *static_cast<PinWork *>(work);
    if (w.refused)
        return w.refused;
    try {
        to_pin(w, q, qd, tau);
        pinocchio::computeABADerivatives(w.model, w.data, w.q, w.v, w.tau);
        if (dqdd_dq)
            matrix_from_pin(w, w.data.ddq_dq, dqdd_dq);
        if (dqdd_dqd)
            matrix_from_pin(w, w.data.ddq_dv, dqdd_dqd);
        if (dqdd_dtau) {
            w.data.Minv.triangularView<Eigen::StrictlyLower>() =
                w.data.Minv.transpose().triangularView<Eigen::StrictlyLower>();
            matrix_from_pin(w, w.data.Minv, dqdd_dtau);
        }
        return MBD_OK;
    } catch (...) {
        return MBD_EINVAL;
    }
}

const mbd_plugin_solver solvers[] = {
    {MBD_PLUGIN_ABI, "pinocchio-aba",
     "plugin: Pinocchio's articulated-body algorithm (pinocchio::aba), its derivatives "
     "(computeABADerivatives)",
     work_new, work_free, forward_aba, derivatives_aba},
    {MBD_PLUGIN_ABI, "pinocchio-crba",
     "plugin: Pinocchio's CRBA and nonLinearEffects, its tree-sparse Cholesky (pinocchio::cholesky)",
     work_new, work_free, forward_crba, nullptr},
};

} // namespace

extern "C" const mbd_plugin_solver *mbd_plugin_solvers(int *count)
{
    *count = static_cast<int>(sizeof solvers / sizeof solvers[0]);
    return solvers;
}
