/*
 * gate.c - grade names and the release gate (--fail-on): which links fail a run, by kind and grade.
 * Pure logic over la_pair; the grades themselves are computed in index/grade.c.
 */
#include "leakaudit.h"

#include <stdio.h>
#include <string.h>

static const char *const k_grade_names[] = {NULL, "related", "near", "copy"};
static const char *const k_kinds[LA_KIND_COUNT] = {"family", "time", "exact", "near", "semantic"};

const char *la_grade_name(int grade) { return grade > 0 && grade <= LA_GRADE_COPY ? k_grade_names[grade] : NULL; }

/* Kinds whose links carry a grade (content evidence); family and time do not. */
static int graded_kind(int i) { return (1u << i) & (LA_KIND_EXACT | LA_KIND_NEAR | LA_KIND_SEMANTIC); }

void la_gate_default(la_gate *g)
{
    for (int i = 0; i < LA_KIND_COUNT; i++) g->min_grade[i] = graded_kind(i) ? LA_GRADE_NEAR : LA_GRADE_RELATED;
}

static int parse_grade(const char *p, size_t n)
{
    for (int g = LA_GRADE_RELATED; g <= LA_GRADE_COPY; g++)
        if (strlen(k_grade_names[g]) == n && strncmp(p, k_grade_names[g], n) == 0) return g;
    return 0;
}

la_status la_gate_parse(const char *spec, la_gate *out)
{
    if (!spec || !*spec)
        return la_error(LA_EINVAL, "--fail-on is empty: name what fails the run (family, time, exact, near, semantic, "
                                   "each optionally :copy, :near or :related; or all), or none to report without gating");
    la_gate g;
    memset(&g, 0, sizeof g);
    if (!strcmp(spec, "none")) {
        *out = g;
        return LA_OK;
    }
    const char *p = spec;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0) return la_error(LA_EINVAL, "--fail-on '%s': an empty item (expected KIND or KIND:GRADE between commas)", spec);
        const char *colon = memchr(p, ':', n);
        size_t kn = colon ? (size_t)(colon - p) : n;
        int grade = LA_GRADE_NEAR;
        if (colon) {
            grade = parse_grade(colon + 1, n - kn - 1);
            if (!grade)
                return la_error(LA_EINVAL, "--fail-on '%.*s': unknown grade '%.*s' (expected copy, near or related)", (int)n, p,
                                (int)(n - kn - 1), colon + 1);
        }
        int found = 0;
        if (kn == 3 && !strncmp(p, "all", 3)) {
            for (int i = 0; i < LA_KIND_COUNT; i++) g.min_grade[i] = graded_kind(i) ? (uint8_t)grade : LA_GRADE_RELATED;
            found = 1;
        } else if (kn == 4 && !strncmp(p, "none", 4)) {
            return la_error(LA_EINVAL, "--fail-on '%s': none stands alone (it turns the gate off)", spec);
        }
        for (int i = 0; i < LA_KIND_COUNT && !found; i++) {
            if (strlen(k_kinds[i]) != kn || strncmp(p, k_kinds[i], kn) != 0) continue;
            if (colon && !graded_kind(i))
                return la_error(LA_EINVAL, "--fail-on '%.*s': %s links have no grade (grades apply to exact, near and semantic)",
                                (int)n, p, k_kinds[i]);
            g.min_grade[i] = graded_kind(i) ? (uint8_t)grade : LA_GRADE_RELATED;
            found = 1;
        }
        if (!found)
            return la_error(LA_EINVAL, "--fail-on '%.*s': unknown kind (expected family, time, exact, near, semantic, all or none)",
                            (int)kn, p);
        if (!e) break;
        p = e + 1;
    }
    *out = g;
    return LA_OK;
}

int la_gate_kind_fails(const la_gate *g, const la_pair *p, int kind)
{
    if (kind < 0 || kind >= LA_KIND_COUNT || !(p->kinds & (1u << kind)) || !g->min_grade[kind]) return 0;
    /* an ungraded content link (grading not run) gates as it did before grades existed */
    return !graded_kind(kind) || p->grade == LA_GRADE_NONE || p->grade >= g->min_grade[kind];
}

int la_gate_fails(const la_gate *g, const la_pair *p)
{
    for (int i = 0; i < LA_KIND_COUNT; i++)
        if (la_gate_kind_fails(g, p, i)) return 1;
    return 0;
}

uint32_t la_gate_kinds(const la_gate *g)
{
    uint32_t k = 0;
    for (int i = 0; i < LA_KIND_COUNT; i++)
        if (g->min_grade[i]) k |= 1u << i;
    return k;
}

void la_gate_format(const la_gate *g, char *buf, size_t size)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < LA_KIND_COUNT; i++) {
        if (!g->min_grade[i]) continue;
        int n = snprintf(buf + w, size - w, "%s%s%s%s", w ? "," : "", k_kinds[i], graded_kind(i) ? ":" : "",
                         graded_kind(i) ? k_grade_names[g->min_grade[i]] : "");
        if (n < 0 || (size_t)n >= size - w) break;
        w += (size_t)n;
    }
    if (!w) snprintf(buf, size, "none");
}
