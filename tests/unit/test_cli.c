/*
 * test_cli.c - the option parser every input-reading command shares: a command's own option
 * handler says whether an option was its own, so any error it returns is reported, including
 * LA_EUNSUPPORTED (which once meant "not mine" and was swallowed); common options still reach
 * la_cli_option, and an option id nobody knows is a usage error with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"

enum { OPT_FANCY = LA_OPT_COMMAND_BASE };

static const struct option k_options[] = {LA_CLI_COMMON_OPTIONS, {"fancy", required_argument, 0, OPT_FANCY}, {0, 0, 0, 0}};

/* Claims --fancy and the positional files; a build without the feature refuses both. */
static la_status refusing(void *ctx, int opt, const char *name, const char *arg, int *handled)
{
    int *calls = ctx;
    (*calls)++;
    *handled = opt == OPT_FANCY || opt == 1;
    if (*handled) return la_error(LA_EUNSUPPORTED, "%s: not in this build", arg);
    return LA_OK;
}

static int parse(la_cli *c, int argc, char **argv, int *calls)
{
    la_cli_init(c, "audit");
    return la_cli_parse(c, argc, argv, k_options, "%s", refusing, calls);
}

static void test_command_error_is_reported(void **state)
{
    (void)state;
    char *argv[] = {"audit", "data.jsonl", NULL};
    la_cli c;
    int calls = 0;
    assert_int_equal(parse(&c, 2, argv, &calls), LA_EXIT_USAGE);
    assert_int_equal(calls, 1);
    assert_int_equal(c.ninputs, 0); /* not taken as an input behind the command's back */
    assert_non_null(strstr(la_last_error(), "data.jsonl: not in this build"));
    la_cli_free(&c);

    char *argv2[] = {"audit", "--fancy", "x", NULL};
    assert_int_equal(parse(&c, 3, argv2, &calls), LA_EXIT_USAGE);
    assert_non_null(strstr(la_last_error(), "x: not in this build"));
    la_cli_free(&c);
}

static void test_common_options_pass_on(void **state)
{
    (void)state;
    char *argv[] = {"audit", "--text-field", "question", "--heldout", "eval", NULL};
    la_cli c;
    int calls = 0;
    assert_int_equal(parse(&c, 5, argv, &calls), -1);
    assert_int_equal(calls, 2);
    assert_string_equal(c.load.text_fields[0], "question");
    assert_string_equal(c.heldout, "eval");
    la_cli_free(&c);
}

static void test_unknown_id_is_an_error(void **state)
{
    (void)state;
    la_cli c;
    la_cli_init(&c, "audit");
    la_error_clear();
    assert_int_equal(la_cli_option(&c, OPT_FANCY + 99, "v"), LA_EINVAL);
    assert_true(la_last_error()[0] != '\0');
    la_cli_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_command_error_is_reported),
        cmocka_unit_test(test_common_options_pass_on),
        cmocka_unit_test(test_unknown_id_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
