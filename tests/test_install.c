/* test_install.c: make install into a staging DESTDIR puts the header, the library, its
 * pkg-config file and the commands in place; a program outside the tree (the README's
 * batch example, examples/batch.c) compiles and links against them with pkg-config
 * alone and runs; the installed mbd check finds its golden data from any directory; make
 * uninstall takes every file away again. */
#include "support.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* make TARGET with the staging directory, as a user would run it: not as part of the
 * make that may be running this test (its jobserver is not ours). */
static cli_result make_staged(const char *target)
{
    char line[512];
    snprintf(
        line, sizeof line,
        "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory %s DESTDIR=%s PREFIX=/usr",
        target, temp_dir);
    return shell_run(line);
}

static const char *const installed[] = {"include/mbd.h",        "lib/libmbd.a",
                                        "lib/pkgconfig/mbd.pc", "bin/mbd",
                                        "bin/mbd-bench",        "share/mbdbench/golden/cases.txt"};

static int staged_exists(const char *file)
{
    char path[256];
    snprintf(path, sizeof path, "%s/usr/%s", temp_dir, file);
    return access(path, F_OK) == 0;
}

static void test_install_link_uninstall(void **unused)
{
    (void)unused;
    cli_result r = make_staged("install");
    if (r.status)
        print_error("make install: %s\n", r.err);
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
    for (size_t k = 0; k < sizeof installed / sizeof installed[0]; k++)
        assert_true(staged_exists(installed[k]));

    char line[1024];
    snprintf(
        line, sizeof line,
        "cc examples/batch.c $(PKG_CONFIG_PATH=%s/usr/lib/pkgconfig pkg-config --define-prefix "
        "--cflags --libs mbd) -o %s/batch && %s/batch",
        temp_dir, temp_dir, temp_dir);
    r = shell_run(line);
    if (r.status)
        print_error("%s\n%s", line, r.err);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "37 states of chain-cardan-20"));
    cli_result_free(&r);

    snprintf(line, sizeof line, "%s/usr/bin/mbd solvers", temp_dir);
    r = shell_run(line);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "bodies"));
    cli_result_free(&r);

    /* The golden data beside the installed mbd, from another directory; cyltree's model is
     * a file. */
    snprintf(line, sizeof line,
             "cd / && %s/usr/bin/mbd check --models chain5,cyltree --solver bodies", temp_dir);
    r = shell_run(line);
    if (r.status)
        print_error("%s\n%s", line, r.err);
    assert_int_equal(r.status, 0);
    cli_result_free(&r);

    r = make_staged("uninstall");
    assert_int_equal(r.status, 0);
    cli_result_free(&r);
    for (size_t k = 0; k < sizeof installed / sizeof installed[0]; k++)
        assert_false(staged_exists(installed[k]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_install_link_uninstall),
    };
    return cmocka_run_group_tests(tests, make_temp_dir, remove_temp_dir);
}
