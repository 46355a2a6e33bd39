/*
 * fuzz_cli.c - fuzz target for the option parser shared by audit and split: the bytes are split at
 * newlines into an argument vector (at most 40 arguments) and parsed with every option of audit
 * (la_audit_options: the common, near, semantic and audit options), then finished (la_cli_finish only looks at --out, it never writes). Whatever
 * the arguments, parsing ends in "go on", an exit code, or a usage error with a message; nothing
 * leaks or reads freed memory (repeated --parts once did).
 */
#include "pipeline.h"

#include "fuzz_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* getopt may keep a pointer into the previous argument vector: the arguments live here for good */
static char g_args[4096];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= sizeof g_args) size = sizeof g_args - 1;
    memcpy(g_args, data, size);
    g_args[size] = '\0';
    char *argv[42];
    int argc = 0;
    argv[argc++] = "audit";
    for (char *p = g_args; argc < 41;) {
        argv[argc++] = p;
        char *nl = memchr(p, '\n', (size_t)(g_args + size - p));
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    argv[argc] = NULL;
    la_audit_job job;
    la_audit_job_init(&job);
    la_cli *c = &job.cli;
    static int quiet;
    if (!quiet) quiet = freopen("/dev/null", "w", stdout) != NULL; /* --help text */
    int rc = la_cli_parse(c, argc, argv, la_audit_options, "%s", la_audit_job_option, &job);
    LA_FUZZ_CHECK(rc == -1 || rc == LA_EXIT_CLEAN || rc == LA_EXIT_USAGE);
    if (rc == -1) {
        la_status s = la_audit_job_finish(&job);
        if (s != LA_OK) LA_FUZZ_CHECK(la_last_error()[0] != '\0');
        LA_FUZZ_CHECK(c->nknown <= LA_CLI_MAX_PARTS && c->ninputs <= LA_CLI_MAX_INPUTS);
        for (size_t k = 0; k < c->nknown; k++) LA_FUZZ_CHECK(c->known[k] && c->known[k][0]);
    }
    la_audit_job_free(&job);
    return 0;
}
