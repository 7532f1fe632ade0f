/* types.c: the joint and cut-joint types: their names in model files, their coordinates
 * and equations. */
#include <string.h>

#include "model/parts.h"

/* Every type a model file may name (MBD_FIXED included; MBD_JOINT_TYPE_COUNT is not one). */
static const char *const joint_names[MBD_FIXED + 1] = {
    [MBD_REVOLUTE] = "revolute", [MBD_PRISMATIC] = "prismatic", [MBD_CYLINDRICAL] = "cylindrical",
    [MBD_CARDAN] = "cardan",     [MBD_SPHERICAL] = "spherical", [MBD_FREE] = "free",
    [MBD_FIXED] = "fixed",
};

static const int dofs_of_type[MBD_JOINT_TYPE_COUNT] = {
    [MBD_REVOLUTE] = 1, [MBD_PRISMATIC] = 1, [MBD_CYLINDRICAL] = 2,
    [MBD_CARDAN] = 2,   [MBD_SPHERICAL] = 3, [MBD_FREE] = 6,
};

/* Position coordinates: the quaternion takes 4 numbers for 3 rotational DOFs. */
static const int coordinates_of_type[MBD_JOINT_TYPE_COUNT] = {
    [MBD_REVOLUTE] = 1, [MBD_PRISMATIC] = 1, [MBD_CYLINDRICAL] = 2,
    [MBD_CARDAN] = 2,   [MBD_SPHERICAL] = 4, [MBD_FREE] = 7,
};

const char *mbd_joint_type_name(mbd_joint_type type)
{
    return (int)type >= 0 && type <= MBD_FIXED && joint_names[type] ? joint_names[type] : "unknown";
}

int mbd_joint_type_nv(mbd_joint_type type)
{
    return joint_type_valid(type) ? dofs_of_type[type] : 0;
}

int mbd_joint_type_nq(mbd_joint_type type)
{
    return joint_type_valid(type) ? coordinates_of_type[type] : 0;
}

/* The number of axes a joint type reads: spherical, free and fixed joints have none. */
int joint_type_naxes(mbd_joint_type type)
{
    return type == MBD_CARDAN                                               ? 2
           : type == MBD_SPHERICAL || type == MBD_FREE || type == MBD_FIXED ? 0
                                                                            : 1;
}

int joint_type_from_name(const char *name)
{
    for (int t = 0; t <= MBD_FIXED; t++)
        if (joint_names[t] && strcmp(name, joint_names[t]) == 0)
            return t;
    return -1;
}

static const char *const loop_names[MBD_LOOP_TYPE_COUNT] = {
    [MBD_LOOP_SPHERICAL] = "spherical",
    [MBD_LOOP_REVOLUTE] = "revolute",
    [MBD_LOOP_WELD] = "weld",
};

static const int loop_rows[MBD_LOOP_TYPE_COUNT] = {
    [MBD_LOOP_SPHERICAL] = 3,
    [MBD_LOOP_REVOLUTE] = 5,
    [MBD_LOOP_WELD] = 6,
};

const char *mbd_loop_type_name(mbd_loop_type type)
{
    return loop_type_valid(type) ? loop_names[type] : "unknown";
}

int mbd_loop_type_nconstraints(mbd_loop_type type)
{
    return loop_type_valid(type) ? loop_rows[type] : 0;
}

int loop_type_from_name(const char *name)
{
    for (int t = 0; t < MBD_LOOP_TYPE_COUNT; t++)
        if (strcmp(name, loop_names[t]) == 0)
            return t;
    return -1;
}
