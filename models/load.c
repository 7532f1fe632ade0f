/* load.c: mbd_model_load: a generator spec or a file, and a file (or mbd_model_load_text's
 * text) by its first character (XML or JSON) and XML by its root element (MJCF or URDF). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models.h"

/* "family:..." with no '/' or ".json" before the ':' reads as a generator spec; returns
 * the family's length, or 0 for a file path. */
static size_t spec_family_length(const char *s)
{
    const char *colon = strchr(s, ':');
    if (!colon)
        return 0;
    const size_t length = (size_t)(colon - s);
    const char *json = strstr(s, ".json");
    if (memchr(s, '/', length) || (json && json < colon))
        return 0;
    return length;
}

/* XML (URDF) starts with '<' after any blanks; JSON cannot. */
static int looks_like_xml(const char *text)
{
    text += strspn(text, " \t\r\n");
    return text[0] == '<';
}

/* Whether the XML text's root element is <mujoco> (MJCF): the first tag after the
 * declaration, comments and processing instructions. */
static int looks_like_mjcf(const char *text)
{
    for (text += strspn(text, " \t\r\n"); text[0] == '<' && (text[1] == '?' || text[1] == '!');
         text += strspn(text, " \t\r\n")) {
        const char *end = text[1] == '!' && strncmp(text, "<!--", 4) == 0 ? strstr(text, "-->")
                                                                          : strchr(text, '>');
        if (!end)
            return 0;
        text = end + (end[0] == '-' ? 3 : 1);
    }
    return strncmp(text, "<mujoco", 7) == 0 && text[7] && strchr(" \t\r\n/>", text[7]);
}

/* MBD_EINVAL with the message for a floating base asked of what is not a URDF robot. */
static int floating_base_refused(const char *path_or_spec, char *err, size_t err_size)
{
    model_error(err, err_size, "%s: a floating base is an option of URDF models only",
                path_or_spec);
    return MBD_EINVAL;
}

/* A model from a file's text, by its first characters; the MJCF compiler reads the file
 * itself (its <include>s and meshes relative to it) unless in_memory. */
static int load_text(const char *path, const char *text, size_t size, int in_memory,
                     const mbd_load_options *options, mbd_model **model, char *err, size_t err_size)
{
    if (looks_like_mjcf(text))
        return options->floating_base
                   ? floating_base_refused(path, err, err_size)
                   : model_mjcf_load(path, in_memory ? text : NULL, model, err, err_size);
    if (looks_like_xml(text))
        return model_urdf_from_text(path, text, size, options, model, err, err_size);
    if (options->floating_base)
        return floating_base_refused(path, err, err_size);
    return model_json_from_text(path, text, size, model, err, err_size);
}

static int load_file(const char *path, const mbd_load_options *options, mbd_model **model,
                     char *err, size_t err_size)
{
    size_t size;
    char *text;
    int status = model_read_file(path, &text, &size, err, err_size);
    if (status != MBD_OK)
        return status;
    status = load_text(path, text, size, 0, options, model, err, err_size);
    free(text);
    return status;
}

int mbd_model_load_text(const char *text, const char *name, const mbd_load_options *options,
                        mbd_model **model, char *err, size_t err_size)
{
    static const mbd_load_options defaults;
    if (model)
        *model = NULL;
    if (!text || !name || !model) {
        model_error(err, err_size, "model: no text given");
        return MBD_EINVAL;
    }
    return load_text(name, text, strlen(text), 1, options ? options : &defaults, model, err,
                     err_size);
}

int mbd_model_load(const char *path_or_spec, const mbd_load_options *options, mbd_model **model,
                   char *err, size_t err_size)
{
    static const mbd_load_options defaults;
    if (!options)
        options = &defaults;
    if (model)
        *model = NULL;
    if (!path_or_spec || !model) {
        model_error(err, err_size, "model: no file or generator spec given");
        return MBD_EINVAL;
    }
    const size_t family = spec_family_length(path_or_spec);
    /* An unknown family that is not a file either gets the generator's message. */
    if (family > 0 && (generator_exists(path_or_spec, family) || access(path_or_spec, F_OK) != 0))
        return options->floating_base ? floating_base_refused(path_or_spec, err, err_size)
                                      : generator_load(path_or_spec, model, err, err_size);
    return load_file(path_or_spec, options, model, err, err_size);
}
