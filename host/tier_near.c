/*
 * tier_near.c - the near-copy tier in the audit pipeline: options, la_near_find across the
 * boundary (its ops through the run's la_exec), and the structured result that audit/report_tiers.c
 * renders: the LSH shape and its expected recall, candidates, pairs and the stages as they ran.
 */
#include "tiers.h"

#include "backend.h"
#include "json_strict.h"
#include "report_tiers.h"

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
    la_pairs found = {0}, within = {0};
    LA_TRY(la_near_find(t, heldout, &p, &found, &st));
    const la_row *rows = la_table_rows_const(t);
    la_status s = LA_OK;
    size_t cross = 0;
    for (size_t k = 0; k < found.n && s == LA_OK; k++) {
        const la_pair *q = &found.v[k];
        int across = rows[q->a].part != rows[q->b].part;
        s = la_pairs_push(across ? pairs : &within, q);
        cross += across;
    }
    la_pairs_free(&found);
    if (s == LA_OK && within.n && !p.within)
        s = la_error(LA_EINTERNAL, "near tier returned pairs inside a partition without --within");
    const la_stage *sig = p.exec ? la_exec_stage(p.exec, "near_signatures") : NULL;
    la_near_report r = {
        .backend = sig && sig->device ? "gpu" : "cpu",
        .char_shingles = p.shingle_kind == LA_SHINGLE_CHAR,
        .shingle_size = p.shingle_size,
        .num_perm = p.num_perm,
        .containment_min_shingles = p.containment_min_shingles,
        .simhash_k = p.simhash_k,
        .within = p.within,
        .threshold = p.threshold,
        .containment_threshold = p.containment_threshold,
        .bands = st.bands,
        .rows = st.rows,
        .expected_recall = st.expected_recall,
        .rows_signed = st.rows_signed,
        .candidates_lsh = st.candidates_lsh,
        .candidates_simhash = st.candidates_simhash,
        .candidates_containment = st.candidates_containment,
        .candidates = st.candidates,
        .pairs = cross,
        .within_pairs = within.v,
        .nwithin = within.n,
    };
    la_backend_stages(p.exec, "near_", r.stages, &r.nstages);
    out->backend = r.backend;
    if (sig && sig->fallback[0]) snprintf(out->fallback, sizeof out->fallback, "%s", sig->fallback);
    out->seconds = st.seconds_signatures + st.seconds_candidates + st.seconds_verify;
    if (s == LA_OK && o->partial) s = la_partial_keep_near(o->partial, &r, st.rows_signed_heldout, out->fallback);
    if (s == LA_OK) s = la_report_near(t, &r, &out->json, &out->md, &out->extra);
    la_pairs_free(&within);
    return s;
}
