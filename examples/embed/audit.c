/* audit.c - run an audit through the installed library: the held-out file against the seen one.
 * Build: cc audit.c $(pkg-config --cflags --libs leakaudit) -o audit
 * Run:   ./audit examples/gsm8k/dev.jsonl examples/gsm8k/test.jsonl question */
#include <leakaudit.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 4) return fprintf(stderr, "usage: %s DEV.jsonl TEST.jsonl TEXT-FIELD\n", argv[0]), 2;
    la_options *o = NULL;
    la_result *r = NULL;
    la_status s = la_options_new(&o);
    if (s == LA_OK) s = la_options_add_input(o, "dev", argv[1]);
    if (s == LA_OK) s = la_options_add_input(o, "test", argv[2]);
    if (s == LA_OK) s = la_options_set(o, "text-field", argv[3]);
    if (s == LA_OK) s = la_audit_run(o, &r);
    if (s != LA_OK) return fprintf(stderr, "audit: %s: %s\n", la_strerror(s), la_last_error()), 2;
    la_result_stats st;
    la_result_stats_get(r, &st);
    size_t n;
    const la_pair *links = la_result_links(r, &n);
    const la_row *rows = la_table_rows_const(la_result_table(r));
    printf("leakaudit %s (header %d): %zu rows, %zu links, %zu clusters, %zu quarantined, exit %d\n", la_version(),
           LEAKAUDIT_VERSION, st.rows_read, st.links, st.clusters, st.quarantined, st.exit_code);
    if (n) printf("first link: %s ~ %s (%s)\n", rows[links[0].b].id, rows[links[0].a].id, la_grade_name(links[0].grade));
    la_result_free(r);
    la_options_free(o);
    return st.exit_code;
}
