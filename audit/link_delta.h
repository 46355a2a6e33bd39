/*
 * link_delta.h - what changed since an earlier run, and which links reviewers have accepted.
 *
 * Against a baseline (the links an earlier run wrote to pairs.jsonl), every link of this run is
 * `new` or `known`, and the baseline's links that no longer exist are `resolved`. A link is known by
 * the ids of its two rows and, where the baseline wrote them, the hashes of their normalized texts:
 * rows added between runs leave the other links known, and an edited row makes its links new. A
 * known link that fails today's gate but did not fail the baseline's (a related link that became
 * near) counts as new: nobody reviewing the baseline's gating links has seen it.
 *
 * Waivers name accepted links (held-out id, seen id, optionally one kind) with a reason, who
 * accepted them and the last day they hold. An unexpired waiver keeps the kinds it names out of the
 * gate; an expired one is reported and waives nothing; one that names no link of this run is stale.
 *
 * Pure logic over the row table and the link list: host/baseline.c and host/waivers.c read the
 * files, audit/report_delta.c renders the result.
 */
#ifndef LA_LINK_DELTA_H
#define LA_LINK_DELTA_H

#include "audit.h"

/* One link of an earlier run, as its pairs.jsonl line names it. */
typedef struct la_prior_link {
    char *heldout_id, *seen_id;        /* id_b and id_a; owned by the baseline */
    char *heldout_split, *seen_split;  /* split_b and split_a; owned by the baseline */
    uint32_t kinds;                    /* la_kind bits */
    uint8_t grade;                     /* la_grade */
    int gated;                         /* it failed that run's gate ("gates") */
    int hashed;                        /* the text hashes below were written */
    uint64_t heldout_hash[2], seen_hash[2];
    uint32_t line;                     /* its line in that pairs.jsonl */
} la_prior_link;

/* What a baseline holds: its links, and the rows its report.json lists under findings.time. */
typedef struct la_baseline {
    la_prior_link *links;
    size_t nlinks, caplinks;
    char **time_ids;
    size_t ntime, captime;
} la_baseline;

/* Append a copy of l (its strings copied). LA_ENOMEM when out of memory. */
la_status la_baseline_add_link(la_baseline *b, const la_prior_link *l);
/* Append a copy of the id of a time row. LA_ENOMEM when out of memory. */
la_status la_baseline_add_time(la_baseline *b, const char *id);
void la_baseline_free(la_baseline *b);

/* Two links of b that name the same pair of ids: returns 1 with their lines (first < second in
 * file order), else 0. A pairs.jsonl the tool wrote has none. */
int la_baseline_find_duplicate(const la_baseline *b, uint32_t *line1 /* OUT */, uint32_t *line2 /* OUT */);

/* One accepted link. */
typedef struct la_waiver {
    char *heldout_id, *seen_id;        /* owned by the la_waivers */
    char *reason, *accepted_by;
    uint32_t kind;                     /* one la_kind bit, or 0: every kind of the link */
    int32_t expires;                   /* the last day it holds, days since 1970-01-01 */
    uint32_t line;                     /* its line in the waivers file */
} la_waiver;

typedef struct la_waivers {
    la_waiver *v;
    size_t n, cap;
} la_waivers;

/* Append a copy of w (its strings copied). LA_ENOMEM when out of memory. */
la_status la_waivers_add(la_waivers *ws, const la_waiver *w);
void la_waivers_free(la_waivers *ws);

/* Two waivers that overlap: the same link and the same kind, or the same link where one of them
 * names no kind (it covers every kind). Returns 1 with their indices (first < second), else 0. */
int la_waivers_find_overlap(const la_waivers *ws, size_t *first /* OUT */, size_t *second /* OUT */);

typedef enum la_link_status { LA_LINK_NEW = 1, LA_LINK_KNOWN = 2 } la_link_status;
typedef enum la_waiver_state { LA_WAIVER_ACTIVE = 1, LA_WAIVER_EXPIRED = 2, LA_WAIVER_STALE = 3 } la_waiver_state;

#define LA_NO_WAIVER SIZE_MAX

/* A run against its baseline and waivers. Arrays are owned (la_delta_free); baseline, waivers and
 * the paths are borrowed and must outlive it. */
typedef struct la_delta {
    const la_baseline *baseline;   /* NULL: no baseline */
    const char *baseline_path;     /* as given, for the reports */
    const la_waivers *waivers;     /* NULL: no waivers */
    const char *waivers_path;
    int32_t today;                 /* the day waivers are checked against */
    int fail_on_new;               /* only new links (and new time rows) fail the run */
    /* with a baseline: per link of this run, in pairs order */
    uint8_t *status;               /* la_link_status */
    size_t nnew, nknown;
    size_t *resolved;              /* indices into baseline->links, by held-out id then seen id */
    size_t nresolved;
    uint8_t *time_new;             /* per entry of la_audit.time_rows: 1 when the baseline lists no such row */
    size_t ntime_new;
    /* with waivers */
    uint32_t *waived;              /* per link: the kinds its unexpired waivers cover */
    size_t *link_waiver;           /* per link: its first waiver (index into waivers->v), or LA_NO_WAIVER */
    size_t *next_waiver;           /* per waiver: the next waiver of the same link, or LA_NO_WAIVER */
    uint8_t *waiver_state;         /* per waiver: la_waiver_state */
    size_t nactive, nexpired, nstale, nwaived_links;
} la_delta;

/* Compare the links of this run (pairs, sorted by la_audit_sort_pairs) with baseline b and apply
 * waivers ws (either may be NULL), today being `today`; g is today's gate (for the rule on links
 * that newly fail it) and a gives the time rows. Fills d (zeroed first; free it with la_delta_free
 * whatever the result); LA_ENOMEM when out of memory. The paths and fail_on_new are left for the
 * caller to set. */
la_status la_delta_compute(const la_table *t, const la_pairs *pairs, const la_audit *a, const la_gate *g,
                           const la_baseline *b, const la_waivers *ws, int32_t today, la_delta *d /* OUT */);
void la_delta_free(la_delta *d);

/* 1 when link k (pairs->v[k] is p) fails the run through the kind with index `kind` (0 ..
 * LA_KIND_COUNT-1), or through any kind when kind is -1: it fails gate g through that kind, no
 * unexpired waiver covers the kind, and with fail_on_new the link is new. d NULL: the gate alone. */
int la_delta_link_fails(const la_delta *d, const la_gate *g, const la_pair *p, size_t k, int kind);

/* 1 when entry i of la_audit.time_rows fails the run under a gate that names time: always, but with
 * fail_on_new only when the baseline does not list the row. d may be NULL. */
int la_delta_time_fails(const la_delta *d, size_t i);

#endif /* LA_LINK_DELTA_H */
