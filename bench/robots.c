/* robots.c: the robots of the robot suites, read from a list (bench/robots.txt: NAME BASE
 * PATH per line) and loaded once, each a family of one model. */
#include "suite.h"

#include "../src/cli.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>

#define ROBOT_SUITES ((1u << SUITE_ROBOTS) | (1u << SUITE_ROBOT_DERIVATIVES))

struct bench_robot {
    bench_family family;
    char name[64];
    char path[4096];
    mbd_model *model;
};

/* The first file that the pattern matches, or the pattern itself (which then fails to
 * load with the loader's message). */
static void resolve(const char *pattern, char *path, size_t size)
{
    glob_t found;
    const int matched = glob(pattern, 0, NULL, &found) == 0 && found.gl_pathc > 0;
    snprintf(path, size, "%s", matched ? found.gl_pathv[0] : pattern);
    if (matched)
        globfree(&found);
}

static void skip(bench_robots *robots, const char *name, const char *path, const char *error)
{
    fprintf(stderr, "mbd-bench: robot %s left out: %s\n", name, error);
    json_array_append_new(robots->skipped,
                          json_pack("{s:s, s:s, s:s}", "name", name, "path", path, "error", error));
}

/* Loads one robot of the list into the next entry, or leaves it out. */
static int add_robot(bench_robots *robots, const char *name, const char *base, const char *pattern)
{
    bench_robot *robot = &robots->robot[robots->count];
    snprintf(robot->name, sizeof robot->name, "%s", name);
    resolve(pattern, robot->path, sizeof robot->path);
    const mbd_load_options options = {.floating_base = strcmp(base, "floating") == 0};
    char err[MBD_ERROR_SIZE];
    if (mbd_model_load(robot->path, &options, &robot->model, err, sizeof err) != MBD_OK) {
        skip(robots, name, robot->path, err);
        return 0;
    }
    const int nv = mbd_model_nv(robot->model);
    robot->family = (bench_family){robot->name, robot->path, ROBOT_SUITES, 0, nv, robot->model};
    json_array_append_new(robots->listed, json_pack("{s:s, s:s, s:s, s:i}", "name", name, "path",
                                                    robot->path, "base", base, "nv", nv));
    robots->count++;
    return 0;
}

/* One line of the list: a robot, a comment or nothing; -1 after a message if malformed. */
static int read_line(bench_robots *robots, const char *list, int number, char *line)
{
    char name[64], base[16], pattern[4096];
    line[strcspn(line, "#\n")] = '\0';
    int fields = sscanf(line, "%63s %15s %4095s", name, base, pattern);
    if (fields <= 0)
        return 0;
    if (fields != 3 ||
        (strcmp(base, "fixed") && strcmp(base, "floating") && strcmp(base, "file"))) {
        fprintf(stderr, "mbd bench: %s:%d: expected NAME fixed|floating|file PATH, got '%.80s'\n",
                list, number, line);
        return -1;
    }
    for (int k = 0; k < robots->count; k++)
        if (strcmp(robots->robot[k].name, name) == 0) {
            fprintf(stderr, "mbd bench: %s:%d: robot %s listed twice\n", list, number, name);
            return -1;
        }
    bench_robot *grown = realloc(robots->robot, (size_t)(robots->count + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, "mbd bench: %s: out of memory\n", list);
        return -1;
    }
    robots->robot = grown;
    return add_robot(robots, name, base, pattern);
}

int bench_robots_load(const char *path, bench_robots *robots)
{
    *robots = (bench_robots){NULL, 0, json_array(), json_array()};
    FILE *list = fopen(path, "r");
    if (!list) {
        fprintf(stderr, "mbd bench: --robots: cannot read '%s'\n", path);
        return CLI_USAGE_ERROR;
    }
    char line[8192];
    int failed = 0;
    for (int number = 1; !failed && fgets(line, sizeof line, list); number++)
        failed = read_line(robots, path, number, line) < 0;
    fclose(list);
    /* the families point into the array, which no longer moves */
    for (int k = 0; k < robots->count; k++)
        robots->robot[k].family.name = robots->robot[k].name,
        robots->robot[k].family.spec = robots->robot[k].path;
    if (failed)
        bench_robots_free(robots);
    return failed ? CLI_USAGE_ERROR : 0;
}

const bench_family *bench_robot_family(const bench_robots *robots, int index)
{
    return &robots->robot[index].family;
}

void bench_robots_free(bench_robots *robots)
{
    for (int k = 0; k < robots->count; k++)
        mbd_model_free(robots->robot[k].model);
    free(robots->robot);
    json_decref(robots->listed);
    json_decref(robots->skipped);
    *robots = (bench_robots){0};
}
