/* models.h: what the readers of models/ share: their entry points for load.c. Not
 * installed. */
#ifndef MBD_MODELS_H
#define MBD_MODELS_H

#include <stddef.h>
#include <stdio.h>

#include "mbd.h"
#include "model/build.h"

/* A model file's whole text into *text (NUL-terminated, *size bytes; free it), within the
 * 64 MiB limit and never waiting on a FIFO (model_file.c): MBD_OK, or MBD_EIO, MBD_ELIMIT
 * or MBD_ENOMEM after a message naming the file. */
int model_read_file(const char *path, char **text, size_t *size, char *err, size_t err_size);

/* A JSON file's text parsed by jansson into *root (json_decref it), duplicate keys refused
 * and nesting limited: MBD_OK, or MBD_EPARSE after a message "FILE:LINE:COLUMN: ...". */
struct json_t;
int model_json_parse(const char *path, const char *text, size_t size, struct json_t **root,
                     char *err, size_t err_size);

/* Models from a file's text: JSON (model_json.c) and URDF (model_urdf.c); a status as
 * mbd_model_load's. */
int model_json_from_text(const char *path, const char *text, size_t size, mbd_model **model,
                         char *err, size_t err_size);
int model_urdf_from_text(const char *path, const char *text, size_t size,
                         const mbd_load_options *options, mbd_model **model, char *err,
                         size_t err_size);

/* A MuJoCo MJCF file compiled by MuJoCo (model_mjcf.c; built without MuJoCo, a message
 * saying so), read from path, or from text where not NULL (a file called path in
 * memory); a status as mbd_model_load's. */
int model_mjcf_load(const char *path, const char *text, mbd_model **model, char *err,
                    size_t err_size);

/* Whether the first len characters of family name a generator. */
int generator_exists(const char *family, size_t len);
int generator_load(const char *spec, mbd_model **model, char *err, size_t err_size);

#endif
