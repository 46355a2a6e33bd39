/*
 * cmd_models.c - `leakaudit models`: the encoder models installed in the models folder (or
 * LEAKAUDIT_MODELS), each loaded and checked, with dimensions, window, weight size and hash, and
 * the calibrated values an audit with it takes (threshold, ratio margin, grade cosines).
 */
#include "commands.h"
#include "grade.h"
#include "model.h"
#include "tiers.h"

#include <math.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The values an audit with model `name` takes unless told otherwise (the tier's own choice of
 * threshold and margin, the grades' cosines), as one indented line. */
static void print_calibration(const char *name)
{
    la_semantic_opts o;
    la_semantic_opts_init(&o);
    o.model = 1, o.lexical = 0, o.embed_set = 1, o.model_name = name;
    const char *src;
    double threshold = la_semantic_threshold_for(&o), margin = la_semantic_margin_for(&o, &src), copy, digits;
    la_grade_params gp;
    la_grade_params_default(&gp);
    if (!la_model_grade_cosines(name, &copy, &digits, &src)) copy = gp.copy_cosine, digits = 0;
    /* the threshold for model vectors was set on the default model: another model without its own
     * borrows it */
    int borrowed = isnan(la_model_threshold(name, &src)) && strcmp(name, LA_MODEL_DEFAULT);
    printf("    threshold %.2f%s, ", threshold, borrowed ? " (set on " LA_MODEL_DEFAULT ", not on this model: "
                                                            "--semantic-threshold)" : "");
    if (margin > 0) printf("ratio margin %g", margin);
    else printf("no ratio margin");
    printf(", grade cosines: copy %.2f, numbers %.2f", copy, gp.numbers_cosine);
    if (digits > 0) printf(", digits %.2f", digits);
    printf("\n");
}

int la_cmd_models(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("Usage: leakaudit models\n\nLists the sentence-encoder models installed in %s (set LEAKAUDIT_MODELS to "
               "look elsewhere; scripts/install-deps.sh installs %s there): name, dimensions, window in tokens, size "
               "and BLAKE2b-256 hash of model.safetensors, then the values an audit with it takes (cosine threshold, "
               "ratio margin, grade cosines: docs/semantic.md, docs/grades.md). Each model is loaded and checked. "
               "Exit 0, or 2 when an installed model is broken.\n", la_model_root(), LA_MODEL_DEFAULT);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "leakaudit models: unexpected argument '%s' (see leakaudit models --help)\n", argv[1]);
        return 2;
    }
    const char *root = la_model_root();
    DIR *d = opendir(root);
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 256) {
        char probe[PATH_MAX + 300];
        snprintf(probe, sizeof probe, "%s/%s", root, e->d_name);
        if (e->d_name[0] != '.' && la_model_is_dir(probe) && (names[n] = strdup(e->d_name))) n++;
    }
    if (d) closedir(d);
    if (!n) {
        printf("No models installed in %s (scripts/install-deps.sh installs %s; audits use the lexical embedding "
               "until then).\n", root, LA_MODEL_DEFAULT);
        return 0;
    }
    qsort(names, n, sizeof *names, cmp_str);
    printf("Models in %s:\n", root);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char dir[PATH_MAX + 300];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        la_model *m;
        if (la_model_open(dir, &m) != LA_OK) {
            printf("  %s  BROKEN: %s\n", names[i], la_last_error());
            rc = 2;
        } else {
            printf("  %s%s  %zu dimensions, window %zu tokens, %.1f MB, %s%s%s%s\n", names[i],
                   !strcmp(names[i], LA_MODEL_DEFAULT) ? " (default)" : "", la_model_dim(m), la_model_window(m) + 2,
                   (double)la_model_weights_bytes(m) / 1e6, la_model_weights_hash(m),
                   *la_model_prompt(m) ? ", texts embedded as \"" : "", la_model_prompt(m),
                   *la_model_prompt(m) ? "\" + text" : "");
            print_calibration(names[i]);
            la_model_free(m);
        }
        free(names[i]);
    }
    return rc;
}
