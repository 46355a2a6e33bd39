/*
 * main.c - the leakaudit program: dispatches to a subcommand. Exit codes: 0 clean, 1 leaks found,
 * 2 bad input or usage, 3 internal error.
 */
#include "commands.h"
#include "leakaudit.h"

#include <stdio.h>
#include <string.h>

static const char k_usage[] =
    "leakaudit %s - find leaks between the partitions of an evaluation set\n"
    "\n"
    "Usage: leakaudit <command> [options]\n"
    "\n"
    "Commands:\n"
    "  audit    find every link across the held-out boundary (family ids, time cutoff, exact copies,\n"
    "           near copies, semantic copies), grade it copy, near or related, and decide where\n"
    "           each row goes; report.html to review; exit 1 when leaks are found\n"
    "  split    make a leak-free split: families before --cutoff go to dev, on or after it to test,\n"
    "           spanning it to quarantine; or --three-set demos/dev/test per class; exit 1 when\n"
    "           dev or test gets less than --min-share\n"
    "  merge    combine the shards of `audit --shard I/N` into the audit's reports and exit code\n"
    "  doctor   build features, the CPU and its kernels, devices, library versions and\n"
    "           self-checks\n"
    "  embed    sentence vectors of texts with the built-in encoder, into a .npy file\n"
    "  models   the installed encoder models, with sizes and weight hashes\n"
    "\n"
    "  leakaudit <command> --help   options of a command\n"
    "  leakaudit --version          version\n"
    "\n"
    "Example:\n"
    "  leakaudit audit --dev dev.jsonl --test test.jsonl --out report/\n";

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        printf(k_usage, la_version());
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("leakaudit %s\n", la_version());
        return 0;
    }
    if (!strcmp(argv[1], "audit")) return la_cmd_audit(argc - 1, argv + 1);
    if (!strcmp(argv[1], "split")) return la_cmd_split(argc - 1, argv + 1);
    if (!strcmp(argv[1], "doctor")) return la_cmd_doctor(argc - 1, argv + 1);
    if (!strcmp(argv[1], "embed")) return la_cmd_embed(argc - 1, argv + 1);
    if (!strcmp(argv[1], "models")) return la_cmd_models(argc - 1, argv + 1);
    if (!strcmp(argv[1], "merge")) return la_cmd_merge(argc - 1, argv + 1);
    fprintf(stderr, "leakaudit: unknown command '%s' (commands: audit, split, merge, doctor, embed, models; see leakaudit --help)\n", argv[1]);
    return 2;
}
