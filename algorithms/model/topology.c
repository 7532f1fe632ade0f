/* topology.c: the tree as the solvers walk it: parents, last children, coordinate offsets
 * and the slots of the O(N) sweeps. */
#include <stdlib.h>

#include "model/parts.h"

/* A slot from the free list, or a new one. */
static int take_slot(const int *free_slots, int *nfree, int *used)
{
    return *nfree ? free_slots[--*nfree] : (*used)++;
}

/* The slots of the O(N) sweeps (mbd_model.sum_slot, motion_slot), so that a slot
 * serves every value that does not live at the same time as another (a chain needs two).
 * The backward pass visits bodies from the highest index down: a body's inertia sum is
 * taken at the step of its highest-index child (a leaf's at its own) and given back after
 * its own. The forward passes visit them upwards: a velocity (an acceleration) is taken at
 * its body's step and given back after the step of the body's highest-index child (a
 * leaf's after its own). free_slots: nb ints. */
static void fill_slots(mbd_model *m, int *free_slots)
{
    int nfree = 0, used = 0;
    for (int i = m->nb - 1; i >= 0; i--) {
        const int p = m->parent[i];
        if (m->last_child[i] < 0)
            m->sum_slot[i] = take_slot(free_slots, &nfree, &used);
        if (p >= 0 && m->last_child[p] == i)
            m->sum_slot[p] = take_slot(free_slots, &nfree, &used);
        free_slots[nfree++] = m->sum_slot[i];
    }
    nfree = used = 0;
    for (int i = 0; i < m->nb; i++) {
        const int p = m->parent[i];
        m->motion_slot[i] = take_slot(free_slots, &nfree, &used);
        if (p >= 0 && m->last_child[p] == i)
            free_slots[nfree++] = m->motion_slot[p];
        if (m->last_child[i] < 0)
            free_slots[nfree++] = m->motion_slot[i];
    }
}

/* Parents, last children, coordinate offsets, the widest branching (the world counts as a
 * parent) and the sweeps' slots. */
int fill_topology(mbd_model *m)
{
    int *children = calloc((size_t)m->nb + 1, sizeof *children);
    if (!children)
        return -1;
    int nq = 0, nv = 0, ndd = 0;
    m->max_children = 0;
    m->angles_from = m->angles_to = 0;
    for (int i = 0; i < m->nb; i++) {
        const int angles = joint_angles(m->joint[i].type);
        if (angles && m->angles_from == m->angles_to)
            m->angles_from = nq;
        if (angles)
            m->angles_to = nq + angles;
        m->parent[i] = m->defs[i].parent;
        m->last_child[i] = -1;
        if (m->parent[i] >= 0)
            m->last_child[m->parent[i]] = i; /* parents come first: i is the highest so far */
        m->q0[i] = nq;
        m->v0[i] = nv;
        m->d0[i] = ndd;
        nq += m->joint[i].nq;
        nv += m->joint[i].nv;
        ndd += m->joint[i].nv * m->joint[i].nv;
        const int count = ++children[m->parent[i] + 1];
        if (count > m->max_children)
            m->max_children = count;
    }
    fill_slots(m, children); /* nb + 1 ints, no longer needed as counts */
    free(children);
    m->nq = nq;
    m->nv = nv;
    m->ndd = ndd;
    return 0;
}
