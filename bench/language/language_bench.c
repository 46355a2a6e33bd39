/*
 * language_bench.c - how the English check of the default model choice (host/language.h) reads
 * real text: for each file (one text per line), how many lines read as English and how many as
 * each other verdict, and the first few lines that do not read as English.
 *   language_bench [--show N] FILE...
 */
#include "language.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

int main(int argc, char **argv)
{
    int show = 0, first = 1;
    if (argc > 2 && !strcmp(argv[1], "--show")) show = atoi(argv[2]), first = 3;
    if (first >= argc) {
        fprintf(stderr, "usage: language_bench [--show N] FILE...\n");
        return 2;
    }
    for (int i = first; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "language_bench: %s: cannot open\n", argv[i]);
            return 2;
        }
        char *line = NULL;
        size_t cap = 0, lines = 0, count[4] = {0};
        ssize_t n;
        int shown = 0;
        while ((n = getline(&line, &cap, f)) > 0) {
            la_lang_verdict v = la_text_language(line, (size_t)n);
            lines++;
            count[v]++;
            if (v != LA_LANG_ENGLISH && shown++ < show) printf("  [%s] %.160s", la_lang_verdict_name(v), line);
        }
        free(line);
        fclose(f);
        printf("%s: %zu lines, %zu read as English (%.1f %%); not English: %zu unspaced script, %zu other "
               "script, %zu other Latin-script language\n", argv[i], lines, count[0],
               lines ? 100.0 * (double)count[0] / (double)lines : 0.0, count[1], count[2], count[3]);
    }
    return 0;
}
