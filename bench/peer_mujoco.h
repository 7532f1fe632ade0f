/* peer_mujoco.h: what the parts of build/peer-mujoco share (bench/peer_mujoco.c, main):
 * one of our models in MuJoCo (peer_mujoco_model.c), the check of our solvers against it
 * (peer_mujoco_check.c) and the timing of both (peer_mujoco_time.c). */
#ifndef MBD_PEER_MUJOCO_H
#define MBD_PEER_MUJOCO_H

#include "mbd.h"

#include <stddef.h>

#include <mujoco/mujoco.h>

#define MAX_VARIANTS 16
#define DEFAULT_SEED 20240601UL

/* A free joint of ours: its body, first coordinate and velocity, and at the state last
 * set its rotation R (body -> world) and the shift a = R (w x v_O) (see below). */
typedef struct {
    int body, q0, v0;
    mjtNum R[9], shift[3];
} free_joint;

typedef struct {
    mjModel *m;
    mjData *d;
    int nq, nv;    /* ours, equal to MuJoCo's */
    int *qpos_of;  /* (nq) our coordinate k -> MuJoCo's qpos index */
    int *dof_of;   /* (nv) our velocity k -> MuJoCo's dof index */
    mjtNum *force; /* (nv, MuJoCo's order) qfrc_applied (+ qfrc_passive) - qfrc_bias */
    int passive;   /* the model has armature or passive forces (peer_forward_path) */
    free_joint *free_joints;
    int nfree;
} peer;

/* Our model in MuJoCo, its coordinates matched to ours. direct: the file MuJoCo reads
 * itself, or NULL: our export of model. 0, or -1 with the reason in err. */
int peer_open(const mbd_model *model, const char *direct, peer *p, char *err, size_t err_size);
void peer_close(peer *p);
/* Our state (q, qd) and applied forces tau into MuJoCo's qpos, qvel, qfrc_applied. */
void peer_set_state(peer *p, const mbd_model *model, const double *q, const double *qd,
                    const double *tau);
/* A MuJoCo dof vector in our coordinate order. */
void peer_gather(const peer *p, const mjtNum *mujoco, double *ours);
/* MuJoCo's forward-dynamics path alone: qacc of the state last set. */
void peer_forward_path(peer *p);
/* Our qdd, and our H and C, from MuJoCo's in our order, where free joints differ. */
void free_joint_accelerations(const peer *p, double *qdd);
void free_joint_terms(const peer *p, double *H, double *C);

/* The modes: peer-mujoco check (peer_mujoco_check.c) and time (peer_mujoco_time.c); the
 * usage on stderr, returning CLI_USAGE_ERROR. */
int peer_check_main(int argc, char **argv);
int peer_time_main(int argc, char **argv);
int peer_usage(void);

#endif
