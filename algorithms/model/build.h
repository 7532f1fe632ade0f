/* build.h: what the readers of models/ use besides mbd.h: the builder told where the
 * description came from, the messages' form and the types' names. No struct layouts: a
 * reader fills an mbd_model_def and reads the model it gets through mbd.h. */
#ifndef MBD_MODEL_BUILD_H
#define MBD_MODEL_BUILD_H

#include <stddef.h>

#include "mbd.h"

#define MBD_MAX_BODIES 1000000

/* mbd_model_build with the file path or generator spec the model came from (source) and
 * labels: NULL, or how messages name each body, such as 'robot.urdf:12: link "base"'
 * (default: 'bodies[i] ("base").'). */
int model_build_labelled(const mbd_model_def *def, const char *source, const char *const *labels,
                         mbd_model **model, char *err, size_t err_size);

/* Sets what the file describes and the dynamics leave out (mbd_model_left_out) on a model
 * just built: 0, or -1 without memory. */
int model_set_left_out(mbd_model *model, const char *text);

/* Writes one printf-formatted line into err (if err_size > 0); control characters are
 * replaced by spaces so that the message stays on one line. */
void model_error(char *err, size_t err_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The joint type called name, or -1; the loop type called name, or -1. */
int joint_type_from_name(const char *name);
int loop_type_from_name(const char *name);
/* The number of axes a joint type reads (0 for spherical, free and fixed joints). */
int joint_type_naxes(mbd_joint_type type);

#endif
