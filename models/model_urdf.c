/* model_urdf.c: reads a robot in URDF (the ROS format) with libxml2.
 *
 * Each <link> is a body: <inertial> gives its <mass value>, its centre of mass and the axes
 * of its <inertia ixx ixy ixz iyy iyz izz> (about the centre of mass) by <origin xyz rpy>;
 * a link without <inertial> is massless. Each <joint> hangs its <child link> from its
 * <parent link> at <origin xyz rpy> (the child's frame, which is also the joint frame),
 * moving about or along <axis xyz> (default 1 0 0): revolute and continuous (revolute
 * without limits) turn, prismatic slides, floating moves freely (MBD_FREE), fixed welds
 * (merged by the model builder into the parent, kept as a frame). The root link is fixed to
 * the world (a root called "world" is the world itself) or, with a floating base, free. <limit>, <dynamics>, <visual>,
 * <collision> and unknown elements are ignored.
 *
 * Links become bodies parents first, depth-first in document order. Every error is one
 * line "FILE:LINE: link|joint "NAME": what", the line being the element's
 * (xmlGetLineNo); malformed XML reads "FILE:LINE: malformed XML: libxml2's message". */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "models.h"

/* What links and joints share, first in both. */
typedef struct {
    char *name;
    xmlNode *node;
} urdf_element;

typedef struct {
    urdf_element e;
    int parent_joint; /* -1: the root */
    int body;         /* index among the bodies given to the builder, -1: the world */
} urdf_link;

typedef struct {
    urdf_element e;
    mbd_joint_type type;
    int parent, child; /* links */
} urdf_joint;

typedef struct {
    const char *name;
    int index;
    const xmlNode *node;
} name_entry;

typedef struct {
    const char *file;
    char *err;
    size_t err_size;
    int nlinks, njoints;
    urdf_link *links;
    urdf_joint *joints;
    name_entry *by_name; /* the links sorted by name */
    int nmimic;          /* joints with <mimic>: each keeps its own coordinate */
} urdf_reader;

/* Reports "FILE:LINE: KIND "NAME": what" (no name part if name is NULL); returns -1. */
static int fail(const urdf_reader *r, const xmlNode *node, const char *kind, const char *name,
                const char *format, ...) __attribute__((format(printf, 5, 6)));
static int fail(const urdf_reader *r, const xmlNode *node, const char *kind, const char *name,
                const char *format, ...)
{
    char what[320];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    if (name)
        model_error(r->err, r->err_size, "%s:%ld: %s \"%.80s\": %s", r->file, xmlGetLineNo(node),
                    kind, name, what);
    else
        model_error(r->err, r->err_size, "%s:%ld: %s: %s", r->file, xmlGetLineNo(node), kind, what);
    return -1;
}

static int is_element(const xmlNode *node, const char *name)
{
    return node->type == XML_ELEMENT_NODE && strcmp((const char *)node->name, name) == 0;
}

/* The first child element called name, or NULL. */
static xmlNode *child(const xmlNode *node, const char *name)
{
    for (xmlNode *c = node->children; c; c = c->next)
        if (is_element(c, name))
            return c;
    return NULL;
}

/* The attribute's value (xmlFree it), or NULL. */
static char *attribute(const xmlNode *node, const char *name)
{
    return (char *)xmlGetProp(node, (const xmlChar *)name);
}

/* ---- numbers ---- */

/* n finite numbers separated by blanks from attribute attr of node into out; left as they
 * are if the attribute is absent and not required. */
static int read_numbers(const urdf_reader *r, const xmlNode *node, const char *kind,
                        const char *name, const char *attr, int n, double *out, int required)
{
    char *text = attribute(node, attr);
    if (!text)
        return required
                   ? fail(r, node, kind, name, "<%s>: missing %s", (const char *)node->name, attr)
                   : 0;
    const char *p = text;
    int count = 0, valid = 1;
    for (char *end; valid && *(p += strspn(p, " \t\r\n")); p = end, count++) {
        const double x = strtod(p, &end);
        valid = end != p && isfinite(x) && count < n && strchr(" \t\r\n", *end) != NULL;
        if (valid)
            out[count] = x;
    }
    int status = 0;
    if (!valid || count != n)
        status = fail(r, node, kind, name, "<%s %s>: expected %d finite number%s, got \"%.40s\"",
                      (const char *)node->name, attr, n, n > 1 ? "s" : "", text);
    xmlFree(text);
    return status;
}

/* x = R(rpy) x_child with URDF's fixed-axis roll, pitch, yaw: R = Rz(y) Ry(p) Rx(r). */
static void rotation_from_rpy(double R[3][3], const double rpy[3])
{
    const double cr = cos(rpy[0]), sr = sin(rpy[0]), cp = cos(rpy[1]), sp = sin(rpy[1]);
    const double cy = cos(rpy[2]), sy = sin(rpy[2]);
    const double rows[3][3] = {{cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr},
                               {sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr},
                               {-sp, cp * sr, cp * cr}};
    memcpy(R, rows, sizeof rows);
}

/* An optional <origin xyz rpy> child of node: the identity placement when absent. */
static int read_origin(const urdf_reader *r, const xmlNode *node, const char *kind,
                       const char *name, double xyz[3], double R[3][3])
{
    double rpy[3] = {0, 0, 0};
    xyz[0] = xyz[1] = xyz[2] = 0.0;
    const xmlNode *origin = child(node, "origin");
    if (origin && (read_numbers(r, origin, kind, name, "xyz", 3, xyz, 0) < 0 ||
                   read_numbers(r, origin, kind, name, "rpy", 3, rpy, 0) < 0))
        return -1;
    rotation_from_rpy(R, rpy);
    return 0;
}

/* ---- links ---- */

/* The link's mass, centre of mass and inertia in its frame (I = R I_inertial R^T). */
static int read_inertial(const urdf_reader *r, const urdf_link *link, mbd_body_def *def)
{
    const xmlNode *inertial = child(link->e.node, "inertial");
    if (!inertial)
        return 0; /* massless */
    static const char *const names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
    static const int row[6] = {0, 0, 0, 1, 1, 2}, col[6] = {0, 1, 2, 1, 2, 2};
    const xmlNode *mass = child(inertial, "mass"), *inertia = child(inertial, "inertia");
    if (!mass || !inertia)
        return fail(r, inertial, "link", link->e.name, "<inertial>: missing <%s>",
                    mass ? "inertia" : "mass");
    double R[3][3], I[3][3], moments[6];
    if (read_origin(r, inertial, "link", link->e.name, def->com, R) < 0 ||
        read_numbers(r, mass, "link", link->e.name, "value", 1, &def->mass, 1) < 0)
        return -1;
    for (int k = 0; k < 6; k++)
        if (read_numbers(r, inertia, "link", link->e.name, names[k], 1, &moments[k], 1) < 0)
            return -1;
    for (int k = 0; k < 6; k++)
        I[row[k]][col[k]] = I[col[k]][row[k]] = moments[k];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double sum = 0.0;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    sum += R[i][a] * I[a][b] * R[j][b];
            def->inertia[i][j] = sum;
        }
    return 0;
}

/* ---- reading the elements ---- */

/* Counts, allocates and names the links and joints; -1 after a message. */
static int collect_elements(urdf_reader *r, const xmlNode *robot)
{
    for (const xmlNode *c = robot->children; c; c = c->next) {
        r->nlinks += is_element(c, "link");
        r->njoints += is_element(c, "joint");
    }
    if (r->nlinks == 0)
        return fail(r, robot, "robot", NULL, "no <link>");
    if (r->nlinks > MBD_MAX_BODIES)
        return fail(r, robot, "robot", NULL, "%d links, over the limit of %d", r->nlinks,
                    MBD_MAX_BODIES);
    r->links = calloc((size_t)r->nlinks, sizeof *r->links);
    r->joints = calloc((size_t)r->njoints + 1, sizeof *r->joints);
    r->by_name = malloc(((size_t)r->nlinks + (size_t)r->njoints) * sizeof *r->by_name);
    if (!r->links || !r->joints || !r->by_name)
        return fail(r, robot, "robot", NULL, "out of memory for %d links", r->nlinks);
    int nl = 0, nj = 0;
    for (xmlNode *c = robot->children; c; c = c->next) {
        const int link = is_element(c, "link");
        if (!link && !is_element(c, "joint"))
            continue;
        urdf_element *e;
        if (link) {
            r->links[nl] = (urdf_link){.parent_joint = -1, .body = -1};
            e = &r->links[nl++].e;
        } else {
            e = &r->joints[nj++].e;
        }
        *e = (urdf_element){attribute(c, "name"), c};
        if (!e->name || !e->name[0])
            return fail(r, c, link ? "link" : "joint", NULL, "missing name");
    }
    return 0;
}

static int compare_names(const void *x, const void *y)
{
    return strcmp(((const name_entry *)x)->name, ((const name_entry *)y)->name);
}

/* by_name (n) = the elements (at base, stride bytes apart) sorted by name; -1 after a
 * message on a duplicate. */
static int sort_names(urdf_reader *r, const void *base, size_t stride, int n, const char *kind)
{
    for (int k = 0; k < n; k++) {
        const urdf_element *e = (const urdf_element *)((const char *)base + (size_t)k * stride);
        r->by_name[k] = (name_entry){e->name, k, e->node};
    }
    qsort(r->by_name, (size_t)n, sizeof *r->by_name, compare_names);
    for (int k = 1; k < n; k++) {
        const name_entry *x = &r->by_name[k - 1], *y = &r->by_name[k];
        if (strcmp(x->name, y->name) == 0) {
            const int y_later = xmlGetLineNo(y->node) >= xmlGetLineNo(x->node);
            return fail(r, (y_later ? y : x)->node, kind, x->name,
                        "duplicate name (also on line %ld)", xmlGetLineNo((y_later ? x : y)->node));
        }
    }
    return 0;
}

/* The link called name, or -1. */
static int find_link(const urdf_reader *r, const char *name)
{
    int lo = 0, hi = r->nlinks - 1;
    while (lo <= hi) {
        const int mid = lo + (hi - lo) / 2;
        const int order = strcmp(name, r->by_name[mid].name);
        if (order == 0)
            return r->by_name[mid].index;
        if (order < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

/* <parent link> or <child link> of a joint: the link's index, or -1 after a message. */
static int joint_link(const urdf_reader *r, const urdf_joint *j, const char *which)
{
    const xmlNode *node = child(j->e.node, which);
    char *name = node ? attribute(node, "link") : NULL;
    const int link = name ? find_link(r, name) : -1;
    if (!name)
        fail(r, node ? node : j->e.node, "joint", j->e.name, "missing <%s link=\"...\">", which);
    else if (link < 0)
        fail(r, node, "joint", j->e.name, "<%s>: no link called \"%.80s\"", which, name);
    xmlFree(name);
    return link;
}

static int joint_type(const urdf_reader *r, urdf_joint *j)
{
    static const struct {
        const char *urdf;
        mbd_joint_type type;
    } types[] = {{"revolute", MBD_REVOLUTE},
                 {"continuous", MBD_REVOLUTE},
                 {"prismatic", MBD_PRISMATIC},
                 {"fixed", MBD_FIXED},
                 {"floating", MBD_FREE}};
    char *type = attribute(j->e.node, "type");
    if (!type)
        return fail(r, j->e.node, "joint", j->e.name, "missing type");
    int status = -1;
    for (size_t k = 0; k < sizeof types / sizeof types[0] && status < 0; k++)
        if (strcmp(type, types[k].urdf) == 0) {
            j->type = types[k].type;
            status = 0;
        }
    if (status < 0 && strcmp(type, "planar") == 0)
        fail(r, j->e.node, "joint", j->e.name, "planar joints are not supported");
    else if (status < 0)
        fail(r, j->e.node, "joint", j->e.name,
             "unknown type \"%.40s\" (revolute, continuous, prismatic, fixed or floating)", type);
    xmlFree(type);
    return status;
}

/* Type, parent and child of every joint; each link the child of one joint at most. */
static int connect_joints(urdf_reader *r)
{
    for (int k = 0; k < r->njoints; k++) {
        urdf_joint *j = &r->joints[k];
        r->nmimic += child(j->e.node, "mimic") != NULL;
        if (joint_type(r, j) < 0 || (j->parent = joint_link(r, j, "parent")) < 0 ||
            (j->child = joint_link(r, j, "child")) < 0)
            return -1;
        urdf_link *c = &r->links[j->child];
        if (j->parent == j->child)
            return fail(r, j->e.node, "joint", j->e.name, "joins link \"%.80s\" to itself",
                        c->e.name);
        if (c->parent_joint >= 0)
            return fail(r, j->e.node, "joint", j->e.name,
                        "link \"%.80s\" is already the child of joint \"%.80s\" (line %ld): a "
                        "closed loop, not supported",
                        c->e.name, r->joints[c->parent_joint].e.name,
                        xmlGetLineNo(r->joints[c->parent_joint].e.node));
        c->parent_joint = k;
    }
    return 0;
}

/* The one link that is no joint's child; -1 after a message. */
static int find_root(const urdf_reader *r, const xmlNode *robot)
{
    int root = -1;
    for (int k = 0; k < r->nlinks; k++) {
        if (r->links[k].parent_joint >= 0)
            continue;
        if (root >= 0)
            return fail(r, r->links[k].e.node, "link", r->links[k].e.name,
                        "a second root (the first is \"%.80s\", line %ld): the links must form "
                        "one tree",
                        r->links[root].e.name, xmlGetLineNo(r->links[root].e.node));
        root = k;
    }
    if (root < 0)
        return fail(r, robot, "robot", NULL, "no root link: the joints form a closed loop");
    return root;
}

/* The links in depth-first order from the root (children in document order) into order;
 * -1 after a message if some link is not reached (it lies on a closed loop). */
static int order_links(const urdf_reader *r, int root, int *order)
{
    const size_t nl = (size_t)r->nlinks;
    /* joints[first[l] .. first[l + 1]): the joints whose parent is link l, in order */
    int *first = calloc(nl + 1, sizeof *first), *next = malloc(nl * sizeof *next);
    int *joints = malloc(((size_t)r->njoints + 1) * sizeof *joints);
    int *stack = malloc(nl * sizeof *stack);
    char *reached = calloc(nl, 1);
    int status = first && next && joints && stack && reached ? 0 : -1;
    if (status < 0)
        fail(r, r->links[root].e.node, "link", r->links[root].e.name, "out of memory");
    int n = 0, top = 0;
    if (status == 0) {
        for (int k = 0; k < r->njoints; k++)
            first[r->joints[k].parent + 1]++;
        for (size_t l = 0; l < nl; l++)
            next[l] = first[l + 1] += first[l];
        for (int k = r->njoints - 1; k >= 0; k--)
            joints[--next[r->joints[k].parent]] = k;
        stack[top++] = root;
    }
    while (top > 0) {
        const int link = stack[--top];
        order[n++] = link;
        reached[link] = 1;
        for (int k = first[link + 1] - 1; k >= first[link]; k--) /* the first on top */
            stack[top++] = r->joints[joints[k]].child;
    }
    for (size_t l = 0; status == 0 && n < r->nlinks && l < nl; l++)
        if (!reached[l])
            status = fail(r, r->links[l].e.node, "link", r->links[l].e.name,
                          "not connected to the root \"%.80s\": its joints form a closed loop",
                          r->links[root].e.name);
    free(first), free(next), free(joints), free(stack), free(reached);
    return status;
}

/* ---- bodies ---- */

/* The joint that hangs link l from its parent: placement, axis, name. */
static int read_joint_placement(const urdf_reader *r, const urdf_joint *j, mbd_body_def *def)
{
    def->joint = j->type;
    def->joint_name = j->e.name;
    if (read_origin(r, j->e.node, "joint", j->e.name, def->origin, def->rotation) < 0)
        return -1;
    if (j->type == MBD_FIXED || j->type == MBD_FREE)
        return 0;
    double *axis = def->axes[0];
    axis[0] = 1.0, axis[1] = axis[2] = 0.0;
    const xmlNode *node = child(j->e.node, "axis");
    if (node && read_numbers(r, node, "joint", j->e.name, "xyz", 3, axis, 0) < 0)
        return -1;
    if (axis[0] == 0.0 && axis[1] == 0.0 && axis[2] == 0.0)
        return fail(r, node, "joint", j->e.name, "<axis xyz>: expected a non-zero vector");
    return 0;
}

/* The bodies, parents first: every link but a root called "world" (the world itself);
 * labels[k] names body k's link in messages. Returns the number of bodies, -1 after a
 * message. */
static int make_bodies(urdf_reader *r, const int *order, const mbd_load_options *options,
                       mbd_body_def *defs, char **labels)
{
    int n = 0;
    for (int k = 0; k < r->nlinks; k++) {
        urdf_link *link = &r->links[order[k]];
        const int root = link->parent_joint < 0;
        const int world = root && strcmp(link->e.name, "world") == 0;
        if (world && options->floating_base)
            return fail(r, link->e.node, "link", link->e.name,
                        "the root is the world itself, which cannot float: the floating base is "
                        "the root link");
        if (world)
            continue; /* link->body stays -1 */
        mbd_body_def *def = &defs[n];
        def->name = link->e.name;
        if (root) {
            def->parent = -1;
            def->joint = options->floating_base ? MBD_FREE : MBD_FIXED;
            for (int a = 0; a < 3; a++)
                def->rotation[a][a] = 1.0;
        } else {
            const urdf_joint *j = &r->joints[link->parent_joint];
            def->parent = r->links[j->parent].body;
            if (read_joint_placement(r, j, def) < 0)
                return -1;
        }
        if (read_inertial(r, link, def) < 0)
            return -1;
        char label[200];
        snprintf(label, sizeof label, "%s:%ld: link \"%.80s\"", r->file, xmlGetLineNo(link->e.node),
                 link->e.name);
        if (!(labels[n] = strdup(label)))
            return fail(r, link->e.node, "link", link->e.name, "out of memory");
        link->body = n++;
    }
    return n;
}

/* A moving link with no mass that carries nothing: its joint would move nothing. */
static int check_massless_leaves(const urdf_reader *r, const mbd_model *model)
{
    const int nb = mbd_model_nbodies(model);
    char *carries = calloc((size_t)nb, 1);
    if (!carries) {
        model_error(r->err, r->err_size, "%s: out of memory", r->file);
        return -1;
    }
    for (int i = 0; i < nb; i++)
        if (mbd_model_body(model, i)->parent >= 0)
            carries[mbd_model_body(model, i)->parent] = 1;
    int status = 0;
    for (int i = 0; i < nb && status == 0; i++)
        if (mbd_model_body(model, i)->mass == 0.0 && !carries[i]) {
            const urdf_link *link = &r->links[find_link(r, mbd_model_body(model, i)->name)];
            status = fail(r, link->e.node, "link", link->e.name,
                          "moves (joint \"%.80s\") but has no mass and carries no moving link: "
                          "give it an <inertial> or make its joint fixed",
                          mbd_model_joint_name(model, i));
        }
    free(carries);
    return status;
}

static int moves(const mbd_body_def *defs, int n)
{
    for (int k = 0; k < n; k++)
        if (defs[k].joint != MBD_FIXED)
            return 1;
    return 0;
}

/* A <mimic> joint couples its coordinate to another joint's (a gripper's fingers); as in
 * Pinocchio's default URDF model, each keeps a coordinate of its own here, the coupling
 * listed as left out (mbd_model_left_out). */
static int set_left_out(const urdf_reader *r, mbd_model *model)
{
    char text[96];
    snprintf(text, sizeof text, "%d <mimic> coupling%s (each joint keeps its own coordinate)",
             r->nmimic, r->nmimic == 1 ? "" : "s");
    return r->nmimic == 0 ? 0 : model_set_left_out(model, text);
}

/* The robot's bodies (n of them, labels naming each one's link) built into a model; an
 * mbd_status after a message. */
static int build_bodies(urdf_reader *r, const char *robot_name, int n, const mbd_body_def *defs,
                        const char *const *labels, mbd_model **model)
{
    mbd_model_def def = {.name = robot_name && robot_name[0] ? robot_name : r->file,
                         .gravity = {0, 0, -9.81},
                         .nbodies = n,
                         .bodies = defs};
    char reason[512]; /* about a link (its label names the file), or else the robot */
    int status = model_build_labelled(&def, r->file, labels, model, reason, sizeof reason);
    if (status != MBD_OK) {
        const int named = strncmp(reason, r->file, strlen(r->file)) == 0;
        model_error(r->err, r->err_size, "%s%s%s", named ? "" : r->file, named ? "" : ": ", reason);
    } else if (check_massless_leaves(r, *model) < 0) {
        status = MBD_EPARSE;
    } else if (set_left_out(r, *model) < 0) {
        model_error(r->err, r->err_size, "%s: out of memory", r->file);
        status = MBD_ENOMEM;
    }
    if (status != MBD_OK && *model) {
        mbd_model_free(*model);
        *model = NULL;
    }
    return status;
}

/* The robot's links built into a model; an mbd_status after a message. */
static int build(urdf_reader *r, const xmlNode *robot, const mbd_load_options *options,
                 mbd_model **model)
{
    int root;
    if (collect_elements(r, robot) < 0 ||
        sort_names(r, r->joints, sizeof *r->joints, r->njoints, "joint") < 0 ||
        sort_names(r, r->links, sizeof *r->links, r->nlinks, "link") < 0 || connect_joints(r) < 0 ||
        (root = find_root(r, robot)) < 0)
        return MBD_EPARSE;
    const size_t nl = (size_t)r->nlinks;
    int *order = malloc(nl * sizeof *order);
    mbd_body_def *defs = calloc(nl, sizeof *defs);
    char **labels = calloc(nl, sizeof *labels);
    char *robot_name = attribute(robot, "name");
    int n = -1, status = MBD_EPARSE;
    if (!order || !defs || !labels) {
        fail(r, robot, "robot", NULL, "out of memory for %d links", r->nlinks);
        status = MBD_ENOMEM;
    } else if (order_links(r, root, order) == 0 &&
               (n = make_bodies(r, order, options, defs, labels)) >= 0 && !moves(defs, n)) {
        fail(r, robot, "robot", NULL, "no joint moves (the root is fixed to the world)");
        n = -1;
    }
    if (n > 0)
        status = build_bodies(r, robot_name, n, defs, (const char *const *)labels, model);
    for (size_t k = 0; labels && k < nl; k++)
        free(labels[k]);
    free(labels), free(defs), free(order);
    xmlFree(robot_name);
    return status;
}

/* The parser's first error (later ones follow from it), kept by keep_first_error. */
typedef struct {
    int line;
    char message[200];
} xml_error;

static void keep_first_error(void *parser, xmlError *error)
{
    xml_error *first = ((xmlParserCtxt *)parser)->_private;
    if (first->line > 0 || error->level < XML_ERR_ERROR)
        return;
    first->line = error->line > 0 ? error->line : 1;
    snprintf(first->message, sizeof first->message, "%s",
             error->message ? error->message : "unknown error");
    first->message[strcspn(first->message, "\n")] = '\0';
}

/* Parses the text (no DTD, no network); NULL after "FILE:LINE: malformed XML: ...". */
static xmlDoc *parse(const urdf_reader *r, const char *text, size_t size)
{
    xmlParserCtxt *ctxt = xmlNewParserCtxt();
    if (!ctxt) {
        model_error(r->err, r->err_size, "%s: out of memory", r->file);
        return NULL;
    }
    xml_error first = {0, "unknown error"};
    ctxt->_private = &first;
    ctxt->sax->serror = keep_first_error;
    xmlDoc *doc = xmlCtxtReadMemory(ctxt, text, (int)size, r->file, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                        XML_PARSE_BIG_LINES);
    if (!doc) {
        model_error(r->err, r->err_size, "%s:%d: malformed XML: %s", r->file,
                    first.line > 0 ? first.line : 1, first.message);
    } else if (doc->intSubset) { /* entities could expand without bound */
        const char *doctype = strstr(text, "<!DOCTYPE");
        int line = 1;
        for (const char *c = text; doctype && c < doctype; c++)
            line += *c == '\n';
        model_error(r->err, r->err_size,
                    "%s:%d: a document type declaration (<!DOCTYPE>) is not supported", r->file,
                    line);
        xmlFreeDoc(doc);
        doc = NULL;
    }
    xmlFreeParserCtxt(ctxt);
    return doc;
}

int model_urdf_from_text(const char *path, const char *text, size_t size,
                         const mbd_load_options *options, mbd_model **model, char *err,
                         size_t err_size)
{
    urdf_reader r = {.file = path, .err = err, .err_size = err_size};
    xmlInitParser(); /* once per process; libxml2 makes later calls no-ops */
    xmlDoc *doc = parse(&r, text, size);
    if (!doc)
        return MBD_EPARSE;
    const xmlNode *robot = xmlDocGetRootElement(doc);
    int status = MBD_EPARSE;
    if (!robot || !is_element(robot, "robot"))
        fail(&r, robot ? robot : (xmlNode *)doc, "robot", NULL,
             "expected <robot> as the root element, got <%.40s>",
             robot ? (const char *)robot->name : "");
    else
        status = build(&r, robot, options, model);
    for (int k = 0; r.links && k < r.nlinks; k++)
        xmlFree(r.links[k].e.name);
    for (int k = 0; r.joints && k < r.njoints; k++)
        xmlFree(r.joints[k].e.name);
    free(r.links), free(r.joints), free(r.by_name);
    xmlFreeDoc(doc);
    return status;
}
