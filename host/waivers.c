/* waivers.c - the waivers file (see waivers.h). */
#include "waivers.h"

#include "input.h"
#include "records.h"

#include <string.h>

static const char k_fields[] = "heldout_id, seen_id, kind, reason, accepted_by, expires";
static const char *const k_field_names[] = {"heldout_id", "seen_id", "kind", "reason", "accepted_by", "expires"};

static int known_field(const char *key)
{
    for (size_t i = 0; i < sizeof k_field_names / sizeof *k_field_names; i++)
        if (!strcmp(key, k_field_names[i])) return 1;
    return 0;
}

typedef struct waivers_ctx {
    la_waivers *w;
    const char *path;
} waivers_ctx;

static int blank_str(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t') return 0;
    return 1;
}

/* Field `name` of rec as a string: *out NULL when absent or null (or, with optional, empty). */
static la_status get_str(const waivers_ctx *c, json_object *rec, uint32_t line, const char *name, int optional,
                         const char **out)
{
    json_object *v;
    *out = NULL;
    int present = json_object_object_get_ex(rec, name, &v) && v;
    if (present && !json_object_is_type(v, json_type_string))
        return la_error(LA_EINPUT, "%s:%u: %s: expected a string", c->path, line, name);
    const char *s = present ? json_object_get_string(v) : NULL;
    if (optional) {
        *out = s && *s ? s : NULL;
        return LA_OK;
    }
    if (!s) return la_error(LA_EINPUT, "%s:%u: %s: missing (every waiver gives %s; kind is optional)", c->path, line, name, k_fields);
    if (blank_str(s)) return la_error(LA_EINPUT, "%s:%u: %s: expected a non-empty string", c->path, line, name);
    *out = s;
    return LA_OK;
}

static la_status parse_kind(const waivers_ctx *c, uint32_t line, const char *s, uint32_t *kind)
{
    *kind = 0;
    if (!s) return LA_OK;
    for (int i = 0; i < LA_KIND_COUNT; i++)
        if (!strcmp(s, la_kind_name(1u << i))) *kind = 1u << i;
    if (!*kind)
        return la_error(LA_EINPUT, "%s:%u: kind: expected family, time, exact, near or semantic (or none for every kind), "
                                   "got '%s'",
                        c->path, line, s);
    return LA_OK;
}

static la_status on_waiver(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line, const char *perr)
{
    (void)raw, (void)rawlen;
    waivers_ctx *c = ctx;
    if (!rec) return la_error(LA_EINPUT, "%s:%u: %s", c->path, line, perr);
    json_object_object_foreach(rec, key, val) {
        (void)val;
        if (!known_field(key))
            return la_error(LA_EINPUT, "%s:%u: %s: not a field of a waiver (expected %s)", c->path, line, key, k_fields);
    }
    la_waiver w;
    memset(&w, 0, sizeof w);
    w.line = line;
    const char *held, *seen, *kind, *reason, *who, *expires;
    LA_TRY(get_str(c, rec, line, "heldout_id", 0, &held));
    LA_TRY(get_str(c, rec, line, "seen_id", 0, &seen));
    LA_TRY(get_str(c, rec, line, "kind", 1, &kind));
    LA_TRY(get_str(c, rec, line, "reason", 0, &reason));
    LA_TRY(get_str(c, rec, line, "accepted_by", 0, &who));
    LA_TRY(get_str(c, rec, line, "expires", 0, &expires));
    LA_TRY(parse_kind(c, line, kind, &w.kind));
    if (la_date_parse(expires, strlen(expires), 0, &w.expires) != LA_OK)
        return la_error(LA_EINPUT, "%s:%u: expires: expected a date YYYY-MM-DD that exists on the calendar (the last day "
                                   "the waiver holds), got '%s'",
                        c->path, line, expires);
    /* borrowed from rec until la_waivers_add copies them */
    w.heldout_id = (char *)held;
    w.seen_id = (char *)seen;
    w.reason = (char *)reason;
    w.accepted_by = (char *)who;
    return la_waivers_add(c->w, &w);
}

la_status la_waivers_read(const char *path, la_waivers *out)
{
    memset(out, 0, sizeof *out);
    la_input in;
    LA_TRY(la_input_read(path, NULL, &in));
    waivers_ctx c = {out, path};
    la_status s = la_records_each(&in, path, la_format_detect(path, &in), NULL, on_waiver, &c);
    la_input_free(&in);
    LA_TRY(s);
    size_t i, j;
    if (la_waivers_find_overlap(out, &i, &j)) {
        const la_waiver *a = &out->v[i], *b = &out->v[j];
        return la_error(LA_EINPUT, "%s:%u: waives the link %s ~ %s (%s) that line %u waives already (%s): one waiver per "
                                   "link and kind, and a waiver without a kind covers every kind",
                        path, b->line, b->heldout_id, b->seen_id, b->kind ? la_kind_name(b->kind) : "every kind", a->line,
                        a->kind ? la_kind_name(a->kind) : "every kind");
    }
    return LA_OK;
}
