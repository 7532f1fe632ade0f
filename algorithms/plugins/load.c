/* load.c: mbd_plugin_load: a plugin library (mbd_plugin.h) loaded, its table checked
 * against both tables (solvers and derivatives methods: a plugin's solver with
 * forward_derivatives is one of each), then registered (solvers/plugin.c). */
#include "derivatives/derivatives.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUOTE(x) #x
#define TEXT_OF(x) QUOTE(x)

/* An ABI-1 table's entries: mbd_plugin_solver up to forward_derivatives, ABI 2's one field
 * more (a pointer, so no padding differs). */
#define ABI1_ENTRY_SIZE offsetof(mbd_plugin_solver, forward_derivatives)

/* Writes "PATH: ..." into err; returns status. */
static int fault(char *err, size_t err_size, const char *path, int status, const char *format, ...)
{
    if (err_size == 0)
        return status;
    int at = snprintf(err, err_size, "%s: ", path);
    if (at >= 0 && (size_t)at < err_size) {
        va_list args;
        va_start(args, format);
        vsnprintf(err + at, err_size - (size_t)at, format, args);
        va_end(args);
    }
    return status;
}

/* The first fault of a name or summary, or NULL: printable, of 1 .. max bytes, and for a
 * name only the characters that a command line and a JSON key take as they are. */
static const char *text_fault(const char *text, size_t max, int is_name)
{
    if (!text)
        return "is NULL";
    const size_t length = strnlen(text, max + 1);
    if (length == 0)
        return "is empty";
    if (length > max)
        return is_name ? "is longer than " TEXT_OF(MBD_PLUGIN_MAX_NAME) " bytes"
                       : "is longer than " TEXT_OF(MBD_PLUGIN_MAX_SUMMARY) " bytes";
    for (size_t k = 0; k < length; k++) {
        const unsigned char c = (unsigned char)text[k];
        const int allowed = is_name ? (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                          (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'
                                    : c >= 0x20 && c != 0x7f;
        if (!allowed)
            return is_name ? "has a character other than letters, digits, '-', '_' and '.'"
                           : "has a control character";
    }
    return NULL;
}

/* The first fault of a name that the command lines or mbd-bench's rows would misread, or
 * NULL: a leading '-' reads as a flag, and the rows name a solver's other formulations and
 * lane forms NAME-momentum and NAME-simd, so such a name could be another solver's row. */
static const char *reserved_fault(const char *name)
{
    static const char *const suffixes[] = {"-momentum", "-simd"};
    if (name[0] == '-')
        return "starts with '-' (a command line would read it as a flag)";
    const size_t length = strlen(name);
    for (size_t k = 0; k < sizeof suffixes / sizeof *suffixes; k++)
        if (length >= strlen(suffixes[k]) &&
            strcmp(name + length - strlen(suffixes[k]), suffixes[k]) == 0)
            return k == 0
                       ? "ends with '-momentum' (mbd-bench's rows name a solver's momentum form so)"
                       : "ends with '-simd' (mbd-bench's rows name a solver's lane form so)";
    return NULL;
}

/* Whether name is taken by a solver or a derivatives method (a plugin's solver may become
 * one of its name) in the tables, or by entries[0 .. count - 1]. */
static int name_taken(const char *name, const mbd_plugin_solver *entries, int count)
{
    if (mbd_solver_find(name) || mbd_derivatives_method_find(name))
        return 1;
    for (int k = 0; k < count; k++)
        if (strcmp(entries[k].name, name) == 0)
            return 1;
    return 0;
}

/* Checks entry k of the table (the ones before it already checked; their ABI, entry 0's,
 * already read). */
static int check_entry(const mbd_plugin_solver *entries, int k, const char *path, char *err,
                       size_t err_size)
{
    const mbd_plugin_solver *entry = &entries[k];
    if (k > 0 && entry->abi != entries[0].abi)
        return fault(err, err_size, path, MBD_EINVAL,
                     "solver %d: ABI %d, but solver 0's is %d (one table, one ABI)", k, entry->abi,
                     entries[0].abi);
    const char *why = text_fault(entry->name, MBD_PLUGIN_MAX_NAME, 1);
    if (!why)
        why = reserved_fault(entry->name);
    if (why)
        return fault(err, err_size, path, MBD_EINVAL, "solver %d: name %s%s%.40s%s", k, why,
                     entry->name ? " ('" : "", entry->name ? entry->name : "",
                     entry->name ? "')" : "");
    if (name_taken(entry->name, entries, k))
        return fault(err, err_size, path, MBD_EINVAL, "solver %d: name '%s' is already taken", k,
                     entry->name);
    if ((why = text_fault(entry->summary, MBD_PLUGIN_MAX_SUMMARY, 0)))
        return fault(err, err_size, path, MBD_EINVAL, "solver '%s': summary %s", entry->name, why);
    const char *null_function = !entry->work_new    ? "work_new"
                                : !entry->work_free ? "work_free"
                                : !entry->forward   ? "forward"
                                                    : NULL;
    if (null_function)
        return fault(err, err_size, path, MBD_EINVAL, "solver '%s': function %s is NULL",
                     entry->name, null_function);
    return MBD_OK;
}

/* The table's entries as this ABI's structs (an ABI-1 entry's forward_derivatives NULL),
 * in *entries (the caller frees it); an ABI that is neither is a fault. Every entry begins
 * with its abi, so entry 0's tells the table's layout. */
static int copy_entries(const void *table, int count, const char *path, mbd_plugin_solver **entries,
                        char *err, size_t err_size)
{
    const int abi = *(const int *)table;
    if (abi != 1 && abi != MBD_PLUGIN_ABI)
        return fault(err, err_size, path, MBD_EINVAL,
                     "solver 0: ABI %d, but this mbdbench loads ABI 1 or %d (rebuild the "
                     "plugin against this mbd_plugin.h)",
                     abi, MBD_PLUGIN_ABI);
    const size_t size = abi == 1 ? ABI1_ENTRY_SIZE : sizeof **entries;
    if (!(*entries = calloc((size_t)count, sizeof **entries)))
        return fault(err, err_size, path, MBD_ENOMEM, "%s", mbd_strerror(MBD_ENOMEM));
    for (int k = 0; k < count; k++)
        memcpy(&(*entries)[k], (const char *)table + (size_t)k * size, size);
    return MBD_OK;
}

/* The library's table, checked whole: *entries (copied, as copy_entries) and *count, or a
 * fault. */
static int read_table(void *library, const char *path, mbd_plugin_solver **entries, int *count,
                      char *err, size_t err_size)
{
    const mbd_plugin_solver *(*solvers)(int *);
    *(void **)&solvers = dlsym(library, "mbd_plugin_solvers");
    if (!solvers)
        return fault(err, err_size, path, MBD_EIO,
                     "not an mbdbench plugin: it has no function mbd_plugin_solvers");
    *count = -1;
    const void *table = solvers(count);
    if (!table)
        return fault(err, err_size, path, MBD_EINVAL, "mbd_plugin_solvers returned NULL");
    if (*count < 1 || *count > MBD_PLUGIN_MAX_SOLVERS)
        return fault(err, err_size, path, MBD_EINVAL,
                     "mbd_plugin_solvers gave a count of %d, not 1 to %d", *count,
                     MBD_PLUGIN_MAX_SOLVERS);
    int status = copy_entries(table, *count, path, entries, err, err_size);
    for (int k = 0; status == MBD_OK && k < *count; k++)
        status = check_entry(*entries, k, path, err, err_size);
    return status;
}

int mbd_plugin_load(const char *path, char *err, size_t err_size)
{
    if (err_size > 0)
        err[0] = '\0';
    if (!path)
        return MBD_EINVAL;
    /* RTLD_NOW: a symbol that the process lacks is a fault now, not a crash later. A path
     * without '/' would be searched for along LD_LIBRARY_PATH: ./ makes it a file. */
    char local[4096];
    if (!strchr(path, '/'))
        snprintf(local, sizeof local, "./%s", path);
    void *library = dlopen(strchr(path, '/') ? path : local, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *why = dlerror();
        return fault(err, err_size, path, MBD_EIO, "cannot load the plugin: %s",
                     why ? why : "unknown reason");
    }
    mbd_plugin_solver *entries = NULL;
    int count = 0;
    int status = read_table(library, path, &entries, &count, err, err_size);
    if (status == MBD_OK && (status = plugin_register(entries, count, path)))
        fault(err, err_size, path, status, "%s", mbd_strerror(status));
    if (status) {
        free(entries);
        dlclose(library);
    }
    return status;
}
