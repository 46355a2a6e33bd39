/*
 * audit.h - the decisions of an audit, as pure logic over the row table and the link list: family
 * and time evidence, leak clusters (union-find over links), and one outcome per row under the
 * quarantine policy. No files, threads or devices here: host/ reads the inputs and writes what
 * this module decides.
 */
#ifndef LA_AUDIT_H
#define LA_AUDIT_H

#include "leakaudit.h"

/* Where a row goes: a partition index, or one of these. */
#define LA_OUT_QUARANTINE LA_OUTCOME_QUARANTINE

/* Reason bits of a row's outcome. */
enum {
    LA_WHY_LINKED = 1u << 0,        /* in a cluster that crosses the boundary */
    LA_WHY_TIME = 1u << 1,          /* dated on the wrong side of the cutoff */
    LA_WHY_SPANS_CUTOFF = 1u << 2,  /* its family has rows on both sides of the cutoff */
    LA_WHY_DUPLICATE = 1u << 3      /* a later copy of a row in the same partition */
};

typedef struct la_family_finding {
    const char *family;   /* borrowed from the table */
    uint32_t *rows;       /* sorted by partition, then id */
    size_t nrows;
    int spans_cutoff;
    int crosses;          /* present on the held-out side and on a seen side */
} la_family_finding;

/* What to do with a cluster that crosses the boundary (--resolve). */
typedef enum la_resolve {
    LA_RESOLVE_QUARANTINE = 0,  /* every row of the cluster goes to quarantine (default) */
    LA_RESOLVE_KEEP_TEST,       /* the held-out set is fixed: only seen-side rows move out */
    LA_RESOLVE_KEEP_SEEN        /* the seen sets are fixed: only held-out rows move out */
} la_resolve;

la_status la_resolve_parse(const char *s, la_resolve *out /* OUT */);
const char *la_resolve_name(la_resolve r);

#define LA_DEFAULT_MAX_CLUSTER 100
#define LA_SUSPECT_WEAKEST 3

typedef struct la_audit_opts {
    uint32_t heldout;
    int32_t cutoff;        /* LA_NO_DATE: no time rule */
    la_resolve resolve;
    size_t max_cluster;    /* clusters with more rows are flagged as suspect (0: never) */
    uint8_t link_grade;    /* content links (exact, near, semantic) below this grade do not join
                              clusters or move rows; 0 means LA_GRADE_NEAR (the default) */
} la_audit_opts;

/* A cluster larger than max_cluster: likely chaining through weak links, named here. */
typedef struct la_suspect {
    uint32_t cluster;
    size_t nrows;
    la_pair weakest[LA_SUSPECT_WEAKEST];   /* its weakest links, weakest first */
    size_t nweakest;
} la_suspect;

/* Strength of a link in [0, 1]: 1 for family and exact, else the best measured similarity. */
double la_pair_strength(const la_pair *p);

typedef struct la_audit {
    la_family_finding *families;   /* families that cross the boundary or span the cutoff, by name */
    size_t nfamilies;
    uint32_t *time_rows;           /* rows dated on the wrong side of the cutoff, by id */
    size_t ntime;
    /* per row */
    uint32_t *out;                 /* outcome: partition index or LA_OUT_QUARANTINE */
    uint32_t *why;                 /* LA_WHY_* bits */
    uint32_t *link_kinds;          /* OR of the kinds of the row's cross links */
    uint32_t *cluster;             /* 1-based leak cluster number (0: none), numbered by smallest id */
    size_t nclusters;
    la_suspect *suspects;          /* clusters over max_cluster rows, by cluster number */
    size_t nsuspects;
    uint8_t link_grade;            /* the grade in force for content links (la_audit_opts) */
} la_audit;

/* 1 when link p joins a cluster and moves rows under a: it has family or time evidence, or its
 * grade reaches a->link_grade. Related links below it are reported but decide nothing. */
int la_audit_pair_moves(const la_audit *a, const la_pair *p);

/* --resolve POLICY[:GRADE]: the policy, and the weakest grade of content links it acts on
 * (default near; quarantine:related also moves rows for related links). */
la_status la_resolve_parse_grade(const char *s, la_resolve *policy /* OUT */, uint8_t *grade /* OUT */);

/* Add family pairs (seen a, held-out b) to pairs, collect family and time findings. */
la_status la_audit_evidence(const la_table *t, const la_audit_opts *o, la_pairs *pairs, la_audit *a /* OUT */);

/* After all evidence is in pairs (normalized): flag time on pairs touching a time-leak row, build
 * clusters and decide every row's outcome. dup_of: per row, first copy or UINT32_MAX (may be NULL). */
la_status la_audit_decide(const la_table *t, const la_audit_opts *o, la_pairs *pairs, const uint32_t *dup_of,
                          la_audit *a);

void la_audit_free(la_audit *a);

/* Sort pairs by (held-out id, seen id) so that output order does not depend on input order. */
void la_audit_sort_pairs(const la_table *t, la_pairs *pairs);

/* ---- statistics ---- */

/* Half width of the 95% normal interval of a proportion p measured on n cases (1.96 * sqrt(p(1-p)/n));
 * NaN for n == 0. */
double la_stat_ci95(double p, size_t n);

/* Expected number of groups that a row-level random split with held-out share p puts on both sides:
 * sum over groups of 1 - (1-p)^n - p^n. */
double la_stat_expected_mixed(const size_t *group_sizes, size_t ngroups, double p);

#endif /* LA_AUDIT_H */
