/* models.h: what model.c, model_json.c and generators.c share. Not installed. */
#ifndef MBD_MODELS_H
#define MBD_MODELS_H

#include <stddef.h>
#include <stdio.h>

#include "mbd.h"

#define MBD_MAX_BODIES 1000000

/* mbd_model_build with the file path or generator spec the model came from. */
mbd_model *model_build_from(const char *source, const char *name, const double gravity[3],
                            int nbodies, const mbd_body_def *bodies, char *err,
                            size_t err_size);

/* What model_build_input builds from. */
typedef struct {
    const char *source;       /* file path or generator spec */
    const char *name;
    const double *gravity;    /* (3) */
    int nbodies;
    const mbd_body_def *bodies;
    const char *const *labels; /* NULL, or how messages name each body, such as
                                  'robot.urdf:12: link "base"' (default: 'bodies[i] ("base").') */
} model_input;
mbd_model *model_build_input(const model_input *in, char *err, size_t err_size);

/* The fixed bodies of bodies (n, parents first) merged into their moving ancestors
 * (model_fixed.c): moving (n) receives the nmoving moving bodies in order, re-parented,
 * their placements composed and their mass properties combined (names: bodies'); from[k]
 * the index in bodies of moving[k]; frames (n) the nframes fixed bodies as frames. -1: no
 * memory. */
int model_merge_fixed(const mbd_body_def *bodies, int n, mbd_body_def *moving, int *from,
                      mbd_frame_def *frames, int *nmoving, int *nframes);

/* Writes one printf-formatted line into err (if err_size > 0); control characters are
 * replaced by spaces so that the message stays on one line. */
void model_error(char *err, size_t err_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Shared checks and formatting (model.c). a / |a| into unit, or -1 for a zero or
 * non-finite a; the problem with a 3x3 rotation (row-major), or NULL if it is one;
 * "[a, b, c]" ("[[...], ...]" for rows > 1) with digits significant digits. */
int model_normalize(double unit[3], const double a[3]);
const char *model_rotation_problem(const double *R);
void model_format_values(char *out, size_t size, int digits, const double *x, int rows,
                         int cols);

/* Frees the loops of a model (model_loops.c); part of mbd_model_free. */
void model_free_loops(mbd_model *model);
/* The loop lines of mbd_model_print, with the degrees of freedom at q = 0. */
void model_print_loops(const mbd_model *model, FILE *out);

/* The joint type called name, or -1; the loop type called name, or -1. */
int loop_type_from_name(const char *name);
int joint_type_from_name(const char *name);
/* The number of axes a joint type reads (0 for spherical and free joints). */
int joint_type_naxes(mbd_joint_type type);

/* A model file's whole text (NUL-terminated, *size bytes; free it), within the 64 MiB
 * limit and never waiting on a FIFO; NULL after a message naming the file (model_file.c). */
char *model_read_file(const char *path, size_t *size, char *err, size_t err_size);

/* Models from a file's text: JSON (model_json.c) and URDF (model_urdf.c). */
mbd_model *model_json_from_text(const char *path, const char *text, size_t size, char *err,
                                size_t err_size);
mbd_model *model_urdf_from_text(const char *path, const char *text, size_t size,
                                const mbd_load_options *options, char *err, size_t err_size);

/* Whether the first len characters of family name a generator. */
int generator_exists(const char *family, size_t len);
mbd_model *generator_load(const char *spec, char *err, size_t err_size);

#endif
