/* generators.c: models from specs "family:key=value,...": tree, chain, legged, rods,
 * ladder. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "spatial/spatial.h"

#define TWO_PI 6.283185307179586

#define TREE_USAGE "tree:n=N[,branching=B][,skew=S][,taper=T][,friction=MU][,base=fixed|free]"
#define CHAIN_USAGE                                                                                \
    "chain:n=N,joint=revolute|prismatic|cylindrical|cardan|spherical|free[,friction=MU]"           \
    "[,base=fixed|free]"
#define LEGGED_USAGE "legged:legs=L,dof=D"
#define RODS_USAGE "rods:n=N"
#define LADDER_USAGE "ladder:n=N,k=K"

const char *mbd_generators_help(void)
{
    return TREE_USAGE
        "  Featherstone's autoTree: revolute z joints; B=1 chain, B=2 binary tree\n" CHAIN_USAGE
        "  3-D serial chain, varied axes, offsets and inertias\n"
        "  friction=MU: Coulomb friction MU on every joint (pin radius 0.05, smoothing 0.01)\n"
        "  base=free: the root body gets a free joint (a floating base)\n" LEGGED_USAGE
        "  a floating torso (free joint) with L legs of D revolute joints\n" RODS_USAGE
        "  N planar rods, total length 1 and mass 10, gravity -y\n" LADDER_USAGE
        "  planar ladder: two rails of N rods, a hinged rung (a loop) every K rods\n";
}

typedef enum { PARAM_COUNT, PARAM_REAL, PARAM_JOINT, PARAM_BASE } param_kind;

typedef struct {
    const char *key;
    param_kind kind;
    double min, max; /* inclusive range of PARAM_COUNT and PARAM_REAL values */
    double fallback; /* value when the key is absent; NAN: the key is required */
} param_def;

/* What a family fills in besides the body names "b1", "b2", ... */
typedef struct {
    char name[64];
    double gravity[3];
    int n;
    mbd_body_def *defs;
    int nloops;
    mbd_loop_def *loops; /* NULL: no loops */
    char (*loop_names)[16];
} generated;

#define MAX_PARAMS 6

/* Every family's first parameter is n, the number of bodies, except legged's. */
typedef struct {
    const char *family;
    const char *usage;
    param_def params[MAX_PARAMS];
    int (*fill)(const double *values, generated *out); /* 0, or -1: out of memory */
    int (*bodies)(const double *values);
} generator;

static void set_diagonal(double M[3][3], double a, double b, double c)
{
    memset(M, 0, 9 * sizeof M[0][0]);
    M[0][0] = a;
    M[1][1] = b;
    M[2][2] = c;
}

static void set_vec3(double v[3], double x, double y, double z)
{
    v[0] = x;
    v[1] = y;
    v[2] = z;
}

/* friction=MU: Coulomb friction on every joint, pins of radius 0.05 m, tanh smoothing over
 * 0.01 m/s or rad/s; the name gets "-fMU". */
#define FRICTION_PARAM                                                                             \
    {                                                                                              \
        "friction", PARAM_REAL, 0, 10, 0                                                           \
    }

static void add_friction(generated *out, double mu)
{
    if (mu == 0.0)
        return;
    for (int i = 0; i < out->n; i++)
        if (mbd_joint_type_nq(out->defs[i].joint) == mbd_joint_type_nv(out->defs[i].joint))
            out->defs[i].friction =
                (mbd_friction){.coulomb = mu, .radius = 0.05, .smoothing = 0.01};
    const size_t used = strlen(out->name);
    snprintf(out->name + used, sizeof out->name - used, "-f%g", mu);
}

/* base=fixed|free (0 or 1): with free, the root body's joint is a free joint (its joint
 * frame kept, so that q = 0 with the identity quaternion is the fixed-base model's pose at
 * q = 0), and the name gets "-free". Before add_friction, which skips free joints. */
#define BASE_PARAM                                                                                 \
    {                                                                                              \
        "base", PARAM_BASE, 0, 1, 0                                                                \
    }

static void set_base(generated *out, double base)
{
    if (base == 0.0)
        return;
    out->defs[0].joint = MBD_FREE;
    const size_t used = strlen(out->name);
    snprintf(out->name + used, sizeof out->name - used, "-free");
}

/* Featherstone's autoTree(n, B, S, T) (spatial_v2, models/autoTree.m). Body i (1-based)
 * has parent floor((i - 2 + ceil(B)) / B), 0 being the world: breadth-first numbering.
 * Link i is a thin tube along x of length l_i = T^(i-1) and mass m_i = T^(3(i-1)), centre
 * of mass (l_i/2, 0, 0), inertia m_i l_i^2 diag(0.0025, 1.015/12, 1.015/12). Its joint
 * turns about the local z axis; a child's joint frame sits at (l_parent, 0, 0), rotated by
 * S about the parent's x axis (Xtree = rotx(S) * xlt([l_parent 0 0])); body 1's is the
 * world frame. */
static int fill_tree(const double *values, generated *out)
{
    const double branching = values[1], skew = values[2], taper = values[3];
    static const double x_axis[3] = {1, 0, 0};
    for (int i = 1; i <= out->n; i++) {
        mbd_body_def *b = &out->defs[i - 1];
        const int parent = (int)floor((i - 2 + ceil(branching)) / branching);
        b->parent = parent - 1;
        b->joint = MBD_REVOLUTE;
        set_vec3(b->axes[0], 0, 0, 1);
        if (parent > 0) {
            set_vec3(b->origin, pow(taper, parent - 1), 0, 0);
            rotation_about(&b->rotation[0][0], x_axis, sin(skew), cos(skew));
        }
        const double length = pow(taper, i - 1), mass = pow(taper, 3.0 * (i - 1));
        b->mass = mass;
        set_vec3(b->com, 0.5 * length, 0, 0);
        const double scale = mass * length * length;
        set_diagonal(b->inertia, 0.0025 * scale, 1.015 / 12 * scale, 1.015 / 12 * scale);
    }
    int used = snprintf(out->name, sizeof out->name, "tree-%d", out->n);
    if (branching != 1.0 || skew != 0.0 || taper != 1.0)
        snprintf(out->name + used, sizeof out->name - (size_t)used, "-b%g-s%g-t%g", branching, skew,
                 taper);
    set_vec3(out->gravity, 0, 0, -9.81);
    set_base(out, values[5]);
    add_friction(out, values[4]);
    return 0;
}

/* A serial chain that makes every joint feel gravity and coupling (nothing planar, nothing
 * axis-aligned with gravity), deterministic in the body index i = 1..n:
 *   - joint axis: cycles through three well-conditioned, non-parallel directions D_k,
 *     k = (i-1) mod 3, each with a horizontal and a vertical component (so that both
 *     rotation and sliding work against gravity); a Cardan joint's second axis is
 *     D_k x D_(k+1), orthogonal to the first;
 *   - joint origin: (0.3, 0.05 sin 1.7i, 0.05 cos 1.3i) in the parent (link length 0.3;
 *     body 1 starts at x = 0), joint frame turned by 0.5 sin 0.7i about (0.6, 0, 0.8);
 *   - mass 1 + 0.5 sin i, centre of mass (0.15, 0.03 cos i, -0.02 sin 2i);
 *   - inertia Q diag(p) Q^T with p = m (0.010, 0.008 + 0.001 sin i, 0.006 + 0.001 cos 1.3i)
 *     (the triangle inequality holds with margin) and Q a turn of 0.9i about (0, 0.6, 0.8),
 *     so products of inertia are non-zero. */
static int fill_chain(const double *values, generated *out)
{
    static const double directions[3][3] = {{1, 0.2, 0.4}, {0.2, 1, -0.4}, {-0.4, 0.3, 1}};
    static const double frame_turn_axis[3] = {0.6, 0, 0.8}, inertia_turn_axis[3] = {0, 0.6, 0.8};
    const mbd_joint_type type = (mbd_joint_type)values[1];
    for (int i = 1; i <= out->n; i++) {
        mbd_body_def *b = &out->defs[i - 1];
        const int k = (i - 1) % 3;
        b->parent = i - 2;
        b->joint = type;
        memcpy(b->axes[0], directions[k], sizeof b->axes[0]);
        if (type == MBD_CARDAN)
            vec3_cross(b->axes[1], directions[k], directions[(k + 1) % 3]);
        set_vec3(b->origin, i > 1 ? 0.3 : 0.0, 0.05 * sin(1.7 * i), 0.05 * cos(1.3 * i));
        const double turn = 0.5 * sin(0.7 * i);
        rotation_about(&b->rotation[0][0], frame_turn_axis, sin(turn), cos(turn));
        b->mass = 1.0 + 0.5 * sin(i);
        set_vec3(b->com, 0.15, 0.03 * cos(i), -0.02 * sin(2.0 * i));
        const double p[3] = {0.010 * b->mass, (0.008 + 0.001 * sin(i)) * b->mass,
                             (0.006 + 0.001 * cos(1.3 * i)) * b->mass};
        double Q[9];
        rotation_about(Q, inertia_turn_axis, sin(0.9 * i), cos(0.9 * i));
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                b->inertia[r][c] = Q[3 * r] * p[0] * Q[3 * c] + Q[3 * r + 1] * p[1] * Q[3 * c + 1] +
                                   Q[3 * r + 2] * p[2] * Q[3 * c + 2];
    }
    snprintf(out->name, sizeof out->name, "chain-%s-%d", mbd_joint_type_name(type), out->n);
    set_vec3(out->gravity, 0, 0, -9.81);
    set_base(out, values[3]);
    add_friction(out, values[2]);
    return 0;
}

/* A floating torso (body 1, free joint at the world origin; a 0.6 x 0.4 x 0.15 box of
 * 10 kg) with L legs spaced evenly around it: leg l's hip at (0.3 cos a, 0.2 sin a, 0),
 * a = 2 pi l / L + pi / L, then D links of 0.25 m straight down (mass 0.5, a thin rod
 * with a little girth), the first turning about the torso's x axis (abduction), the
 * others about y (hip and knee pitch, ...). Bodies: the torso, then each leg's links in
 * order, so that a leg is a contiguous chain. */
static int fill_legged(const double *values, generated *out)
{
    const int legs = (int)values[0], dof = (int)values[1];
    const double torso_mass = 10.0, dx = 0.6, dy = 0.4, dz = 0.15;
    const double link = 0.25, link_mass = 0.5, moment = link_mass * link * link / 12.0;
    mbd_body_def *torso = &out->defs[0];
    torso->parent = -1;
    torso->joint = MBD_FREE;
    torso->mass = torso_mass;
    set_diagonal(torso->inertia, torso_mass * (dy * dy + dz * dz) / 12.0,
                 torso_mass * (dx * dx + dz * dz) / 12.0, torso_mass * (dx * dx + dy * dy) / 12.0);
    for (int l = 0; l < legs; l++)
        for (int k = 0; k < dof; k++) {
            const int i = 1 + l * dof + k;
            mbd_body_def *b = &out->defs[i];
            const double a = TWO_PI * (l + 0.5) / legs;
            b->parent = k == 0 ? 0 : i - 1;
            b->joint = MBD_REVOLUTE;
            set_vec3(b->axes[0], k == 0 ? 1 : 0, k == 0 ? 0 : 1, 0);
            if (k == 0)
                set_vec3(b->origin, 0.5 * dx * cos(a), 0.5 * dy * sin(a), 0);
            else
                set_vec3(b->origin, 0, 0, -link);
            b->mass = link_mass;
            set_vec3(b->com, 0, 0, -0.5 * link);
            set_diagonal(b->inertia, moment, moment, 0.05 * moment);
        }
    snprintf(out->name, sizeof out->name, "legged-%d-%d", legs, dof);
    set_vec3(out->gravity, 0, 0, -9.81);
    return 0;
}

/* The textbook planar chain of n rods: total length 1 and mass 10, rod k of length l = 1/n
 * and mass m = 10/n with its centre at (l/2, 0, 0), joint k+1 at (l, 0, 0) of rod k, all
 * joints revolute about z (relative angles), gravity along -y. A thin rod: m l^2/12 about
 * y and z, and 1e-3 of that about x to keep the inertia positive definite. */
static int fill_rods(const double *values, generated *out)
{
    (void)values;
    const double length = 1.0 / out->n, mass = 10.0 / out->n;
    const double moment = mass * length * length / 12.0;
    for (int i = 0; i < out->n; i++) {
        mbd_body_def *b = &out->defs[i];
        b->parent = i - 1;
        b->joint = MBD_REVOLUTE;
        set_vec3(b->axes[0], 0, 0, 1);
        set_vec3(b->origin, i > 0 ? length : 0.0, 0, 0);
        b->mass = mass;
        set_vec3(b->com, 0.5 * length, 0, 0);
        set_diagonal(b->inertia, 1e-3 * moment, moment, moment);
    }
    snprintf(out->name, sizeof out->name, "rods-%d", out->n);
    set_vec3(out->gravity, 0, -9.81, 0);
    return 0;
}

/* Two planar rails of n rods each (rod length l = 1/n, mass 1/n, along +y, revolute about z,
 * relative angles), the left from the world origin, the right from (w, 0, 0), w = 0.3:
 * bodies b1..bn and b(n+1)..b(2n). After them, a rung every k rods: a rod of width w and
 * mass 1/n along +x, hinged (revolute z) at the tip of left rod jk and pinned to the tip of
 * right rod jk by a revolute cut joint "rungJ": floor(n/k) loops, each a parallelogram
 * four-bar, each 2 independent equations (the other 3 are redundant in the plane). At
 * q = 0 the ladder stands upright and every loop is closed. */
static int fill_ladder(const double *values, generated *out)
{
    const int n = (int)values[0], k = (int)values[1];
    const double l = 1.0 / n, mass = 1.0 / n, moment = mass * l * l / 12.0, width = 0.3;
    for (int i = 0; i < 2 * n; i++) {
        mbd_body_def *b = &out->defs[i];
        const int first = i % n == 0;
        b->parent = first ? -1 : i - 1;
        b->joint = MBD_REVOLUTE;
        set_vec3(b->axes[0], 0, 0, 1);
        set_vec3(b->origin, first && i > 0 ? width : 0.0, first ? 0.0 : l, 0);
        b->mass = mass;
        set_vec3(b->com, 0, 0.5 * l, 0);
        set_diagonal(b->inertia, moment, 1e-3 * moment, moment);
    }
    out->nloops = n / k;
    out->loops = calloc((size_t)out->nloops + 1, sizeof *out->loops);
    out->loop_names = malloc(((size_t)out->nloops + 1) * sizeof *out->loop_names);
    if (!out->loops || !out->loop_names)
        return -1;
    const double rung_moment = mass * width * width / 12.0;
    for (int r = 0; r < out->nloops; r++) {
        mbd_body_def *rung = &out->defs[2 * n + r];
        rung->parent = (r + 1) * k - 1;
        rung->joint = MBD_REVOLUTE;
        set_vec3(rung->axes[0], 0, 0, 1);
        set_vec3(rung->origin, 0, l, 0);
        rung->mass = mass;
        set_vec3(rung->com, 0.5 * width, 0, 0);
        set_diagonal(rung->inertia, 1e-3 * rung_moment, rung_moment, rung_moment);
        mbd_loop_def *loop = &out->loops[r];
        snprintf(out->loop_names[r], sizeof out->loop_names[r], "rung%d", r + 1);
        loop->name = out->loop_names[r];
        loop->type = MBD_LOOP_REVOLUTE;
        loop->body_a = 2 * n + r;
        loop->body_b = rung->parent + n;
        set_vec3(loop->origin_a, width, 0, 0);
        set_vec3(loop->origin_b, 0, l, 0);
        set_diagonal(loop->rotation_a, 1, 1, 1);
        set_diagonal(loop->rotation_b, 1, 1, 1);
        set_vec3(loop->axis, 0, 0, 1);
    }
    snprintf(out->name, sizeof out->name, "ladder-%d-%d", n, k);
    set_vec3(out->gravity, 0, -9.81, 0);
    return 0;
}

/* Bodies of a spec: n, or the ladder's 2 n rail rods and n / k rungs. */
static int n_bodies(const double *values) { return (int)values[0]; }
static int legged_bodies(const double *values) { return 1 + (int)values[0] * (int)values[1]; }
static int ladder_bodies(const double *values)
{
    return 2 * (int)values[0] + (int)values[0] / (int)values[1];
}

#define COUNT_PARAM                                                                                \
    {                                                                                              \
        "n", PARAM_COUNT, 1, MBD_MAX_BODIES, NAN                                                   \
    }

static const generator generators[] = {
    {"tree",
     TREE_USAGE,
     {COUNT_PARAM,
      {"branching", PARAM_REAL, 1, MBD_MAX_BODIES, 1},
      {"skew", PARAM_REAL, -TWO_PI, TWO_PI, 0},
      {"taper", PARAM_REAL, 1e-3, 1e3, 1},
      FRICTION_PARAM,
      BASE_PARAM},
     fill_tree,
     n_bodies},
    {"chain",
     CHAIN_USAGE,
     {COUNT_PARAM, {"joint", PARAM_JOINT, 0, 0, NAN}, FRICTION_PARAM, BASE_PARAM},
     fill_chain,
     n_bodies},
    {"legged",
     LEGGED_USAGE,
     {{"legs", PARAM_COUNT, 1, 1000, NAN}, {"dof", PARAM_COUNT, 1, 1000, NAN}},
     fill_legged,
     legged_bodies},
    {"rods", RODS_USAGE, {COUNT_PARAM}, fill_rods, n_bodies},
    {"ladder",
     LADDER_USAGE,
     {{"n", PARAM_COUNT, 1, MBD_MAX_BODIES / 3, NAN},
      {"k", PARAM_COUNT, 1, MBD_MAX_BODIES / 3, NAN}},
     fill_ladder,
     ladder_bodies},
};

#define NGENERATORS (int)(sizeof generators / sizeof generators[0])

static const generator *find_generator(const char *family, size_t len)
{
    for (int g = 0; g < NGENERATORS; g++)
        if (strlen(generators[g].family) == len && strncmp(generators[g].family, family, len) == 0)
            return &generators[g];
    return NULL;
}

int generator_exists(const char *family, size_t len) { return find_generator(family, len) != NULL; }

static const param_def *find_param(const generator *gen, const char *key, size_t len)
{
    for (const param_def *p = gen->params; p < gen->params + MAX_PARAMS && p->key; p++)
        if (strlen(p->key) == len && strncmp(p->key, key, len) == 0)
            return p;
    return NULL;
}

/* Parses text as the parameter's kind; 0 if it is well formed and in range. */
static int parse_value(const param_def *p, const char *text, double *out)
{
    char *end;
    errno = 0;
    switch (p->kind) {
    case PARAM_COUNT:
        if (!isdigit((unsigned char)text[0]))
            return -1;
        *out = (double)strtoll(text, &end, 10);
        break;
    case PARAM_REAL:
        *out = strtod(text, &end);
        break;
    case PARAM_JOINT:
        *out = joint_type_from_name(text);
        return *out < 0 ? -1 : 0;
    case PARAM_BASE:
        *out = strcmp(text, "free") == 0 ? 1 : strcmp(text, "fixed") == 0 ? 0 : -1;
        return *out < 0 ? -1 : 0;
    }
    if (end == text || *end != '\0' || errno != 0 || !(*out >= p->min && *out <= p->max))
        return -1;
    return 0;
}

static void describe_expected(const param_def *p, char *out, size_t size)
{
    if (p->kind == PARAM_JOINT)
        snprintf(out, size, "expected revolute, prismatic, cylindrical, cardan, spherical or free");
    else if (p->kind == PARAM_BASE)
        snprintf(out, size, "expected fixed or free");
    else
        snprintf(out, size, "expected %s from %.15g to %.15g",
                 p->kind == PARAM_COUNT ? "an integer" : "a number", p->min, p->max);
}

/* Parses the item "key=value" (len characters) into its parameter's slot of values. */
static int parse_item(const char *spec, const generator *gen, const char *item, size_t len,
                      double *values, int *seen, char *err, size_t err_size)
{
    const size_t key_len = strcspn(item, "=,");
    if (key_len >= len) {
        model_error(err, err_size, "%s: \"%.*s\": expected key=value (usage: %s)", spec, (int)len,
                    item, gen->usage);
        return -1;
    }
    const param_def *p = find_param(gen, item, key_len);
    if (!p) {
        model_error(err, err_size, "%s: %.*s: unknown key \"%.*s\" (usage: %s)", spec, (int)len,
                    item, (int)key_len, item, gen->usage);
        return -1;
    }
    const int k = (int)(p - gen->params);
    if (seen[k]++) {
        model_error(err, err_size, "%s: %.*s: key %s given twice", spec, (int)len, item, p->key);
        return -1;
    }
    const char *value = item + key_len + 1;
    const int value_len = (int)(len - key_len - 1);
    char text[64];
    snprintf(text, sizeof text, "%.*s", value_len, value);
    if (value_len >= (int)sizeof text || parse_value(p, text, &values[k]) < 0) {
        char expected[96];
        describe_expected(p, expected, sizeof expected);
        model_error(err, err_size, "%s: %.*s: %s, got \"%.*s\"", spec, (int)len, item, expected,
                    value_len, value);
        return -1;
    }
    return 0;
}

/* Parses the "key=value,..." items after the ':' into values, one per parameter. */
static int parse_params(const char *spec, const generator *gen, double *values, char *err,
                        size_t err_size)
{
    int seen[MAX_PARAMS] = {0};
    for (int k = 0; k < MAX_PARAMS; k++)
        values[k] = gen->params[k].fallback;
    for (const char *item = strchr(spec, ':') + 1; *item;) {
        const size_t len = strcspn(item, ",");
        if (parse_item(spec, gen, item, len, values, seen, err, err_size) < 0)
            return -1;
        item += len;
        if (*item == ',' && *++item == '\0') {
            model_error(err, err_size, "%s: trailing ',' (usage: %s)", spec, gen->usage);
            return -1;
        }
    }
    for (int k = 0; k < MAX_PARAMS && gen->params[k].key; k++)
        if (isnan(values[k])) {
            model_error(err, err_size, "%s: %s: missing (usage: %s)", spec, gen->params[k].key,
                        gen->usage);
            return -1;
        }
    return 0;
}

/* Bodies named "b1", "b2", ..., in one block of names; joints at the parent's origin
 * with the identity rotation unless the family says otherwise. */
static int generated_alloc(generated *g, int n, char (**names)[16])
{
    g->n = n;
    g->defs = calloc((size_t)n, sizeof *g->defs);
    *names = malloc((size_t)n * sizeof **names);
    if (!g->defs || !*names)
        return -1;
    for (int i = 0; i < n; i++) {
        snprintf((*names)[i], sizeof **names, "b%d", i + 1);
        g->defs[i].name = (*names)[i];
        set_diagonal(g->defs[i].rotation, 1, 1, 1);
    }
    return 0;
}

/* Geometric tapers (tree's taper^(3i)) over many bodies leave the range of doubles: an
 * overflow would read as a non-finite mass, an underflow as a massless body or a zero
 * inertia, neither what the spec meant. */
static int check_scales(const generated *g, char *err, size_t err_size)
{
    for (int i = 0; i < g->n; i++) {
        const mbd_body_def *b = &g->defs[i];
        const double smallest = fmin(b->inertia[0][0], fmin(b->inertia[1][1], b->inertia[2][2]));
        const double largest = fmax(b->inertia[0][0], fmax(b->inertia[1][1], b->inertia[2][2]));
        if (!isnormal(b->mass) || !isnormal(smallest) || !isfinite(largest)) {
            model_error(err, err_size,
                        "bodies[%d] (\"%s\"): mass %g and inertia (diagonal up to %g) leave the "
                        "range of doubles; use fewer bodies or a taper nearer 1",
                        i, b->name, b->mass, largest);
            return -1;
        }
    }
    return 0;
}

static int build_generated(const generated *g, const char *spec, mbd_model **model, char *err,
                           size_t err_size)
{
    mbd_model_def def = {.name = g->name,
                         .nbodies = g->n,
                         .bodies = g->defs,
                         .nloops = g->loops ? g->nloops : 0,
                         .loops = g->loops};
    memcpy(def.gravity, g->gravity, sizeof def.gravity);
    return model_build_labelled(&def, spec, NULL, model, err, err_size);
}

int generator_load(const char *spec, mbd_model **model, char *err, size_t err_size)
{
    const generator *gen = find_generator(spec, strcspn(spec, ":"));
    if (!gen || !strchr(spec, ':')) {
        model_error(
            err, err_size,
            "%s: neither a model file nor a generator spec (generators: tree, chain, legged, rods, "
            "ladder)",
            spec);
        return MBD_EPARSE;
    }
    double values[MAX_PARAMS];
    if (parse_params(spec, gen, values, err, err_size) < 0)
        return MBD_EPARSE;
    generated g = {0};
    char(*names)[16] = NULL;
    const int nbodies = gen->bodies(values);
    char reason[512];
    if (nbodies > MBD_MAX_BODIES) { /* legged: L D + 1 */
        model_error(err, err_size, "%s: %d bodies, over the limit of %d", spec, nbodies,
                    MBD_MAX_BODIES);
        return MBD_ELIMIT;
    }
    int status = MBD_OK;
    if (generated_alloc(&g, nbodies, &names) < 0 || gen->fill(values, &g) < 0) {
        model_error(err, err_size, "%s: out of memory", spec);
        status = MBD_ENOMEM;
    } else if (check_scales(&g, reason, sizeof reason) < 0) {
        model_error(err, err_size, "%s: %s", spec, reason);
        status = MBD_EPARSE;
    } else if ((status = build_generated(&g, spec, model, reason, sizeof reason)) != MBD_OK) {
        model_error(err, err_size, "%s: %s", spec, reason);
    }
    free(g.loops);
    free(g.loop_names);
    free(g.defs);
    free(names);
    return status;
}
