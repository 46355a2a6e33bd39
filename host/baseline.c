/* baseline.c - an earlier run's pairs.jsonl and report.json as a baseline (see baseline.h). */
#include "baseline.h"

#include "input.h"
#include "records.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef struct pairs_ctx {
    la_baseline *b;
    const char *path;
} pairs_ctx;

/* The string member `name` of o, or NULL when absent or of another type (*present says which). */
static const char *str_member(json_object *o, const char *name, int *present)
{
    json_object *v;
    *present = json_object_object_get_ex(o, name, &v) && v;
    return *present && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static la_status bad_field(const pairs_ctx *c, uint32_t line, const char *field, const char *what)
{
    return la_error(LA_EINPUT, "%s:%u: %s: expected %s (is this the pairs.jsonl of a leakaudit audit?)", c->path, line,
                    field, what);
}

static int hex_digit(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* 32 lowercase hex digits, high 64 bits first, into h[1] and h[0]. */
static int parse_hash(const char *s, uint64_t h[2])
{
    if (!s || strlen(s) != 32) return 0;
    h[0] = h[1] = 0;
    for (int i = 0; i < 32; i++) {
        int d = hex_digit(s[i]);
        if (d < 0) return 0;
        h[i < 16] = h[i < 16] << 4 | (uint64_t)d;
    }
    return 1;
}

static int parse_kinds(json_object *o, uint32_t *kinds)
{
    json_object *v;
    if (!json_object_object_get_ex(o, "kinds", &v) || !json_object_is_type(v, json_type_array)) return 0;
    size_t n = json_object_array_length(v);
    *kinds = 0;
    for (size_t k = 0; k < n; k++) {
        json_object *e = json_object_array_get_idx(v, k);
        const char *name = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : "";
        uint32_t bit = 0;
        for (int i = 0; i < LA_KIND_COUNT && !bit; i++)
            if (!strcmp(name, la_kind_name(1u << i))) bit = 1u << i;
        if (!bit) return 0;
        *kinds |= bit;
    }
    return *kinds != 0;
}

static int parse_grade(json_object *o, uint8_t *grade)
{
    json_object *v;
    if (!json_object_object_get_ex(o, "grade", &v)) return 0;
    *grade = LA_GRADE_NONE;
    if (!v) return 1; /* null: family or time evidence only */
    if (!json_object_is_type(v, json_type_string)) return 0;
    for (int g = LA_GRADE_RELATED; g <= LA_GRADE_COPY; g++)
        if (!strcmp(json_object_get_string(v), la_grade_name(g))) *grade = (uint8_t)g;
    return *grade != LA_GRADE_NONE;
}

static la_status on_pair(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line, const char *perr)
{
    (void)raw, (void)rawlen;
    pairs_ctx *c = ctx;
    if (!rec) return la_error(LA_EINPUT, "%s:%u: %s", c->path, line, perr);
    la_prior_link l;
    memset(&l, 0, sizeof l);
    l.line = line;
    static const char *const names[] = {"id_b", "id_a", "split_b", "split_a"};
    char **slots[] = {&l.heldout_id, &l.seen_id, &l.heldout_split, &l.seen_split};
    for (int i = 0; i < 4; i++) {
        int present;
        const char *s = str_member(rec, names[i], &present);
        if (!s || !*s) return bad_field(c, line, names[i], "a non-empty string");
        *slots[i] = (char *)s; /* borrowed from rec until la_baseline_add_link copies it */
    }
    if (!parse_kinds(rec, &l.kinds)) return bad_field(c, line, "kinds", "a non-empty array of kind names");
    if (!parse_grade(rec, &l.grade)) return bad_field(c, line, "grade", "copy, near, related or null");
    json_object *v;
    if (!json_object_object_get_ex(rec, "gates", &v) || !json_object_is_type(v, json_type_boolean))
        return bad_field(c, line, "gates", "true or false");
    l.gated = json_object_get_boolean(v);
    int has_a, has_b;
    const char *ha = str_member(rec, "text_hash_a", &has_a), *hb = str_member(rec, "text_hash_b", &has_b);
    if (has_a || has_b) {
        if (!parse_hash(ha, l.seen_hash)) return bad_field(c, line, "text_hash_a", "32 lowercase hex digits");
        if (!parse_hash(hb, l.heldout_hash)) return bad_field(c, line, "text_hash_b", "32 lowercase hex digits");
        l.hashed = 1;
    }
    return la_baseline_add_link(c->b, &l);
}

/* report.json: an audit's, with the ids of its time rows. */
static la_status read_report(const char *path, la_baseline *b)
{
    la_input in;
    LA_TRY(la_input_read(path, NULL, &in));
    json_tokener *tok = json_tokener_new();
    json_object *root = tok ? json_tokener_parse_ex(tok, in.data, (int)(in.len > INT_MAX ? INT_MAX : in.len)) : NULL;
    la_status s = LA_OK;
    json_object *cmd, *findings, *time;
    if (!tok) s = la_error(LA_ENOMEM, "out of memory reading %s", path);
    else if (!root || json_tokener_get_error(tok) != json_tokener_success || !json_object_is_type(root, json_type_object))
        s = la_error(LA_EINPUT, "%s: expected the report.json of a leakaudit audit (not one JSON object)", path);
    else if (!json_object_object_get_ex(root, "command", &cmd) || !cmd || strcmp(json_object_get_string(cmd), "audit"))
        s = la_error(LA_EINPUT, "%s: command: expected \"audit\" (a baseline is the output folder of leakaudit audit)", path);
    else if (!json_object_object_get_ex(root, "findings", &findings) || !json_object_object_get_ex(findings, "time", &time) ||
             !json_object_is_type(time, json_type_array))
        s = la_error(LA_EINPUT, "%s: findings.time: expected an array", path);
    for (size_t k = 0; s == LA_OK && k < json_object_array_length(time); k++) {
        json_object *id, *e = json_object_array_get_idx(time, k);
        if (!json_object_object_get_ex(e, "id", &id) || !json_object_is_type(id, json_type_string))
            s = la_error(LA_EINPUT, "%s: findings.time[%zu].id: expected a string", path, k);
        else s = la_baseline_add_time(b, json_object_get_string(id));
    }
    if (root) json_object_put(root);
    if (tok) json_tokener_free(tok);
    la_input_free(&in);
    return s;
}

la_status la_baseline_read(const char *dir, la_baseline *out)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return la_error(LA_EINPUT, "--baseline %s: expected the output folder of an earlier leakaudit audit (it holds "
                                   "pairs.jsonl and report.json)",
                        dir);
    char path[PATH_MAX];
    const char *sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
    if (snprintf(path, sizeof path, "%s%sreport.json", dir, sep) >= (int)sizeof path)
        return la_error(LA_EINPUT, "--baseline %s: the path is too long", dir);
    LA_TRY(read_report(path, out));
    snprintf(path, sizeof path, "%s%spairs.jsonl", dir, sep);
    la_input in;
    LA_TRY(la_input_read(path, NULL, &in));
    pairs_ctx c = {out, path};
    la_status s = la_records_each(&in, path, LA_FMT_JSONL, NULL, on_pair, &c);
    la_input_free(&in);
    LA_TRY(s);
    uint32_t l1, l2;
    if (la_baseline_find_duplicate(out, &l1, &l2))
        return la_error(LA_EINPUT, "%s:%u: names the link of line %u again (id_b and id_a; is the file edited?)", path, l2, l1);
    return LA_OK;
}
