/* context.c: host, CPU, caches and build of a run, from /proc, /sys and the Makefile. */
#define _GNU_SOURCE /* dladdr */
#include "context.h"

#include "../src/workload.h"

#include <dlfcn.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The Makefile passes these with -D; a build by other means says so. */
#ifndef MBD_BENCH_CC
#define MBD_BENCH_CC "unknown"
#endif
#ifndef MBD_BENCH_CFLAGS
#define MBD_BENCH_CFLAGS "unknown"
#endif
#ifndef MBD_GIT_COMMIT
#define MBD_GIT_COMMIT "unknown"
#endif

#define CACHE_DIR "/sys/devices/system/cpu/cpu0/cache"

/* The OpenBLAS that runs: its threading model and the file the loader took it from. */
static const char *openblas_threading(void)
{
    switch (openblas_get_parallel()) {
    case 0:
        return "sequential";
    case 1:
        return "pthreads";
    default:
        return "openmp";
    }
}

static const char *openblas_library(void)
{
    Dl_info info;
    return dladdr((void *)openblas_get_config, &info) && info.dli_fname ? info.dli_fname
                                                                        : "unknown";
}

/* The first line of a small text file, without its newline; "" if unreadable. */
static const char *read_line(const char *path, char *buf, size_t size)
{
    FILE *in = fopen(path, "r");
    buf[0] = '\0';
    if (in) {
        if (fgets(buf, (int)size, in))
            buf[strcspn(buf, "\n")] = '\0';
        fclose(in);
    }
    return buf;
}

/* The value of the first "key : value" line of /proc/cpuinfo, or "". */
static const char *cpuinfo_value(const char *key, char *buf, size_t size)
{
    FILE *in = fopen("/proc/cpuinfo", "r");
    char line[512];
    buf[0] = '\0';
    while (in && fgets(line, sizeof line, in)) {
        char *colon = strchr(line, ':');
        if (colon && strncmp(line, key, strlen(key)) == 0) {
            snprintf(buf, size, "%s", colon + 1 + strspn(colon + 1, " \t"));
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    if (in)
        fclose(in);
    return buf;
}

/* CPUs in a sysfs list such as "0-3,8". */
static int count_cpu_list(const char *list)
{
    int count = 0;
    for (const char *p = list; *p;) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p)
            break;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        count += (int)(hi - lo + 1);
        p = *end == ',' ? end + 1 : end;
    }
    return count;
}

static json_t *cache_entry(int index)
{
    char path[128], level[16], type[32], size[32], shared[128];
    snprintf(path, sizeof path, CACHE_DIR "/index%d/level", index);
    if (!*read_line(path, level, sizeof level))
        return NULL;
    snprintf(path, sizeof path, CACHE_DIR "/index%d/type", index);
    read_line(path, type, sizeof type);
    snprintf(path, sizeof path, CACHE_DIR "/index%d/size", index);
    read_line(path, size, sizeof size);
    snprintf(path, sizeof path, CACHE_DIR "/index%d/shared_cpu_list", index);
    read_line(path, shared, sizeof shared);
    long bytes = strtol(size, NULL, 10) * (strchr(size, 'M')   ? 1 << 20
                                           : strchr(size, 'K') ? 1 << 10
                                                               : 1);
    return json_pack("{s:s, s:i, s:I, s:i}", "type", type, "level", atoi(level), "size",
                     (json_int_t)bytes, "num_sharing", count_cpu_list(shared));
}

static json_t *caches(void)
{
    json_t *list = json_array();
    json_t *entry;
    for (int index = 0; (entry = cache_entry(index)); index++)
        json_array_append_new(list, entry);
    return list;
}

static json_t *load_average(void)
{
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    return json_pack("[f, f, f]", load[0], load[1], load[2]);
}

/* Google Benchmark calls frequency scaling enabled unless the governor is "performance";
 * without cpufreq (most VMs) nothing scales that the guest can see. */
static int scaling_enabled(void)
{
    char governor[64];
    read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", governor, sizeof governor);
    return *governor && strcmp(governor, "performance") != 0;
}

static void local_date(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%S%z", &tm);
}

json_t *bench_context_collect(const char *executable)
{
    char date[64], host[256] = "", model[256], mhz[64];
    local_date(date, sizeof date);
    gethostname(host, sizeof host - 1);
    cpuinfo_value("model name", model, sizeof model);
    cpuinfo_value("cpu MHz", mhz, sizeof mhz);
#ifdef __OPTIMIZE__
    const char *build_type = "release";
#else
    const char *build_type = "debug";
#endif
    /* libgomp reads it at start-up; spinning threads hurt badly on a machine with other load */
    const char *wait_policy = getenv("OMP_WAIT_POLICY");
    return json_pack("{s:s, s:s, s:s, s:i, s:i, s:s, s:b, s:o, s:o, s:s, s:s, s:s, s:s, s:s, "
                     "s:s, s:s, s:s, s:i, s:s, s:i, s:i}",
                     "date", date, "host_name", host, "executable", executable, "num_cpus",
                     (int)sysconf(_SC_NPROCESSORS_ONLN), "mhz_per_cpu", (int)(atof(mhz) + 0.5),
                     "cpu_model", model, "cpu_scaling_enabled", scaling_enabled(), "caches",
                     caches(), "load_avg", load_average(), "library_build_type", build_type,
                     "compiler", MBD_BENCH_CC, "compiler_version", __VERSION__, "compiler_flags",
                     MBD_BENCH_CFLAGS, "git_commit", MBD_GIT_COMMIT, "openblas_config",
                     openblas_get_config(), "openblas_threading", openblas_threading(),
                     "openblas_library", openblas_library(), "omp_max_threads",
                     omp_get_max_threads(), "omp_wait_policy", wait_policy ? wait_policy : "unset",
                     "json_schema_version", 1, "simd_lanes", /* the W of bodies-simd here */
                     mbd_solver_lanes(mbd_solver_find("bodies"), MBD_ACCELERATION));
}

static const char *text(const json_t *context, const char *key)
{
    const char *value = json_string_value(json_object_get(context, key));
    return value ? value : "?";
}

void bench_context_print(const json_t *context, FILE *out)
{
    fprintf(out, "%s\nRunning %s (commit %s)\n", text(context, "date"), text(context, "executable"),
            text(context, "git_commit"));
    fprintf(out, "Run on (%d X %d MHz CPU s) %s\nCPU Caches:\n",
            (int)json_integer_value(json_object_get(context, "num_cpus")),
            (int)json_integer_value(json_object_get(context, "mhz_per_cpu")),
            text(context, "cpu_model"));
    size_t index;
    json_t *cache;
    json_array_foreach(json_object_get(context, "caches"), index, cache)
    {
        json_int_t size = json_integer_value(json_object_get(cache, "size"));
        fprintf(out, "  L%d %-11s %6lld KiB (shared by %d)\n",
                (int)json_integer_value(json_object_get(cache, "level")), text(cache, "type"),
                (long long)(size >> 10),
                (int)json_integer_value(json_object_get(cache, "num_sharing")));
    }
    json_t *load = json_object_get(context, "load_avg");
    fprintf(out, "Load Average: %.2f, %.2f, %.2f\n", json_real_value(json_array_get(load, 0)),
            json_real_value(json_array_get(load, 1)), json_real_value(json_array_get(load, 2)));
    fprintf(out, "Build: %s %s %s\n", text(context, "compiler"), text(context, "compiler_version"),
            text(context, "compiler_flags"));
    fprintf(out, "OpenBLAS: %s (%s, %s)\nOMP_WAIT_POLICY: %s\n", text(context, "openblas_config"),
            text(context, "openblas_threading"), text(context, "openblas_library"),
            text(context, "omp_wait_policy"));
}
