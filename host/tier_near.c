/*
 * tier_near.c - the near-copy tier in the audit pipeline: options, la_near_find across the
 * boundary, and the report section with the LSH shape and its expected recall at the threshold.
 */
#include "tiers.h"

#include "json_strict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void la_near_opts_init(la_near_opts_cli *o)
{
    memset(o, 0, sizeof *o);
    o->enabled = 1;
    la_near_params_default(&o->p);
}

static la_status parse_double(const char *name, const char *arg, double lo, double hi, double *out)
{
    size_t n = strlen(arg);
    double v = la_json_number_len(arg, n) == n && n ? strtod(arg, NULL) : NAN;
    if (!(v >= lo && v <= hi)) return la_error(LA_EINVAL, "--%s %s: expected a number from %g to %g", name, arg, lo, hi);
    *out = v;
    return LA_OK;
}

static la_status parse_int(const char *name, const char *arg, long lo, long hi, int *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*end || !*arg || v < lo || v > hi) return la_error(LA_EINVAL, "--%s %s: expected an integer from %ld to %ld", name, arg, lo, hi);
    *out = (int)v;
    return LA_OK;
}

la_status la_near_option(la_near_opts_cli *o, const char *name, const char *arg)
{
    if (!strcmp(name, "near")) {
        if (!strcmp(arg, "on")) o->enabled = 1;
        else if (!strcmp(arg, "off")) o->enabled = 0;
        else return la_error(LA_EINVAL, "--near %s: expected on or off", arg);
        return LA_OK;
    }
    if (!strcmp(name, "near-threshold")) return parse_double(name, arg, 0.01, 1.0, &o->p.threshold);
    if (!strcmp(name, "containment-threshold")) {
        if (!strcmp(arg, "off")) {
            o->p.containment_threshold = 2.0; /* above 1: no pair can reach it, and near.c skips the path */
            return LA_OK;
        }
        la_status s = parse_double(name, arg, 0.01, 1.0, &o->p.containment_threshold);
        if (s != LA_OK)
            return la_error(LA_EINVAL, "--containment-threshold %s: expected a share from 0.01 to 1, or off", arg);
        return s;
    }
    if (!strcmp(name, "within")) {
        o->p.within = 1;
        return LA_OK;
    }
    if (!strcmp(name, "shingle")) {
        if (!strcmp(arg, "word")) o->p.shingle_kind = LA_SHINGLE_WORD;
        else if (!strcmp(arg, "char")) o->p.shingle_kind = LA_SHINGLE_CHAR;
        else return la_error(LA_EINVAL, "--shingle %s: expected word or char", arg);
        return LA_OK;
    }
    if (!strcmp(name, "shingle-size")) return parse_int(name, arg, 1, LA_SHINGLE_MAX_N, &o->p.shingle_size);
    if (!strcmp(name, "num-perm")) return parse_int(name, arg, 1, LA_MINHASH_MAX_PERM, &o->p.num_perm);
    if (!strcmp(name, "simhash-k")) return parse_int(name, arg, -1, 7, &o->p.simhash_k);
    return LA_EUNSUPPORTED;
}

la_status la_tier_near(const la_near_opts_cli *o, const la_table *t, uint32_t heldout, int threads, la_pairs *pairs,
                       la_tier_out *out)
{
    memset(out, 0, sizeof *out);
    la_near_params p = o->p;
    p.threads = threads;
    la_near_stats st;
    memset(&st, 0, sizeof st);
    la_pairs found = {0};
    LA_TRY(la_near_find(t, heldout, &p, &found, &st));
    const la_row *rows = la_table_rows_const(t);
    size_t cross = 0, within = 0;
    la_status s = LA_OK;
    for (size_t k = 0; k < found.n && s == LA_OK; k++) {
        const la_pair *q = &found.v[k];
        if (rows[q->a].part != rows[q->b].part) {
            s = la_pairs_push(pairs, q);
            cross++;
            continue;
        }
        within++;
        la_buf *x = &out->extra;
        la_buf_puts(x, "{\"id_a\":");
        la_buf_json_str(x, rows[q->a].id);
        la_buf_puts(x, ",\"id_b\":");
        la_buf_json_str(x, rows[q->b].id);
        la_buf_puts(x, ",\"split\":");
        la_buf_json_str(x, la_table_part_name(t, rows[q->a].part));
        la_buf_printf(x, ",\"scores\":{\"jaccard\":%.6g,\"containment\":%.6g,\"minhash\":%.6g,\"simhash_distance\":%d}}\n",
                      q->jaccard, q->containment, q->minhash, q->simhash_dist);
    }
    la_pairs_free(&found);
    if (s != LA_OK) return s;
    out->seconds = st.seconds_signatures + st.seconds_candidates + st.seconds_verify;
    out->backend = "cpu";
    char shingles[64];
    snprintf(shingles, sizeof shingles, "%s %d-grams", p.shingle_kind == LA_SHINGLE_CHAR ? "character" : "word",
             p.shingle_size);
    la_buf *j = &out->json;
    la_buf_puts(j, "{\"backend\": \"cpu\", \"shingles\": ");
    la_buf_json_str(j, shingles);
    la_buf_printf(j, ", \"num_perm\": %d, \"threshold\": ", p.num_perm);
    la_buf_json_num(j, p.threshold);
    la_buf_puts(j, ", \"containment_threshold\": ");
    la_buf_json_num(j, p.containment_threshold);
    la_buf_printf(j, ", \"containment_min_shingles\": %d, \"simhash_k\": %d, \"lsh\": {\"bands\": %d, \"rows\": %d, "
                     "\"expected_recall_at_threshold\": ",
                  p.containment_min_shingles, p.simhash_k, st.bands, st.rows);
    la_buf_json_num(j, st.expected_recall);
    la_buf_printf(j, "}, \"rows_signed\": %zu, \"candidates\": {\"lsh\": %zu, \"simhash\": %zu, \"containment\": %zu, "
                     "\"distinct\": %zu}, \"pairs\": %zu, \"within_pairs\": %zu}",
                  st.rows_signed, st.candidates_lsh, st.candidates_simhash, st.candidates_containment, st.candidates,
                  cross, within);
    la_buf *m = &out->md;
    la_buf_printf(m, "\n## Near copies\n\n%s, MinHash with %d permutations in %d bands of %d rows (expected recall %.3f "
                     "at Jaccard %.2f), SimHash within %d bits, containment at %.2f. %zu candidates verified on the true "
                     "shingle sets; %zu near pairs across the boundary.%s\n",
                  shingles, p.num_perm, st.bands, st.rows, st.expected_recall, p.threshold, p.simhash_k,
                  p.containment_threshold, st.candidates, cross,
                  p.within ? " Pairs inside one partition are in within_pairs.jsonl." : "");
    if (within && !p.within) return la_error(LA_EINTERNAL, "near tier returned pairs inside a partition without --within");
    if (la_buf_status(j) != LA_OK || la_buf_status(m) != LA_OK || la_buf_status(&out->extra) != LA_OK)
        return la_error(LA_ENOMEM, "out of memory writing the near section");
    return LA_OK;
}
