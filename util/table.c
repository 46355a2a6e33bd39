/*
 * table.c - the row table: partitions, input file names, rows, an arena that owns every string, and
 * an id index for uniqueness checks. Pure data: it never reads files.
 */
#include "la_arena.h"
#include "leakaudit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK (1u << 20)

struct la_arena_block {
    la_arena_block *next;
    size_t used, cap;
    char data[];
};

struct la_table {
    la_arena arena;
    la_row *rows;
    size_t nrows, caprows;
    char **parts;
    uint32_t nparts, capparts;
    char **files;
    uint32_t nfiles, capfiles;
    size_t *ids;          /* open addressing: row index + 1, 0 = empty */
    size_t idcap;         /* power of two */
    la_raw_place *places; /* per row (capplaces of them, zeroed past what was set), or NULL */
    size_t capplaces;
};

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

la_status la_table_new(la_table **out)
{
    la_table *t = calloc(1, sizeof *t);
    if (!t) return la_error(LA_ENOMEM, "out of memory creating the row table");
    *out = t;
    return LA_OK;
}

void la_table_free(la_table *t)
{
    if (!t) return;
    la_arena_free(&t->arena);
    for (uint32_t i = 0; i < t->nparts; i++) free(t->parts[i]);
    for (uint32_t i = 0; i < t->nfiles; i++) free(t->files[i]);
    free(t->parts);
    free(t->files);
    free(t->rows);
    free(t->ids);
    free(t->places);
    free(t);
}

la_status la_arena_alloc(la_arena *a, size_t n, char **out)
{
    la_arena_block *b = a->head;
    if (n > SIZE_MAX - sizeof *b - 1) return la_error(LA_ENOMEM, "a string of %zu bytes is too long to store", n);
    if (!b || b->cap - b->used < n + 1) {
        size_t block = a->block ? a->block : ARENA_BLOCK;
        size_t cap = n + 1 > block ? n + 1 : block;
        la_arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb) return la_error(LA_ENOMEM, "out of memory storing row text");
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        a->head = b = nb;
    }
    char *p = b->data + b->used;
    p[n] = '\0';
    b->used += n + 1;
    *out = p;
    return LA_OK;
}

la_status la_arena_strdup(la_arena *a, const char *s, size_t n, const char **out)
{
    char *p = NULL;
    LA_TRY(la_arena_alloc(a, n, &p));
    memcpy(p, s, n);
    *out = p;
    return LA_OK;
}

void la_arena_free(la_arena *a)
{
    if (!a) return;
    for (la_arena_block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    a->head = NULL;
}

void la_table_adopt(la_table *t, la_arena *from)
{
    la_arena_block *first = from->head;
    if (!first) return;
    la_arena_block *last = first;
    while (last->next) last = last->next;
    /* behind the table's own head block, which stays the one la_table_strdup fills */
    la_arena_block *head = t->arena.head;
    if (head) {
        last->next = head->next;
        head->next = first;
    } else {
        t->arena.head = first;
    }
    from->head = NULL;
}

la_status la_table_strdup(la_table *t, const char *s, size_t n, const char **out)
{
    return la_arena_strdup(&t->arena, s, n, out);
}

static la_status add_name(char ***v, uint32_t *n, uint32_t *cap, const char *name, uint32_t *index)
{
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 8;
        char **nv = realloc(*v, c * sizeof *nv);
        if (!nv) return la_error(LA_ENOMEM, "out of memory");
        *v = nv;
        *cap = c;
    }
    char *copy = strdup(name);
    if (!copy) return la_error(LA_ENOMEM, "out of memory");
    (*v)[*n] = copy;
    *index = (*n)++;
    return LA_OK;
}

la_status la_table_find_part(const la_table *t, const char *name, uint32_t *index)
{
    for (uint32_t i = 0; i < t->nparts; i++)
        if (strcmp(t->parts[i], name) == 0) {
            *index = i;
            return LA_OK;
        }
    return LA_EINVAL;
}

la_status la_table_part(la_table *t, const char *name, uint32_t *index)
{
    if (la_table_find_part(t, name, index) == LA_OK) return LA_OK;
    return add_name(&t->parts, &t->nparts, &t->capparts, name, index);
}

uint32_t la_table_npart(const la_table *t) { return t->nparts; }
const char *la_table_part_name(const la_table *t, uint32_t i) { return i < t->nparts ? t->parts[i] : NULL; }

la_status la_table_add_file(la_table *t, const char *name, uint32_t *index)
{
    return add_name(&t->files, &t->nfiles, &t->capfiles, name, index);
}

const char *la_table_file_name(const la_table *t, uint32_t i) { return i < t->nfiles ? t->files[i] : NULL; }
uint32_t la_table_nfile(const la_table *t) { return t->nfiles; }

static la_status id_index_grow(la_table *t)
{
    size_t cap = t->idcap ? t->idcap * 2 : 1024;
    size_t *ids = calloc(cap, sizeof *ids);
    if (!ids) return la_error(LA_ENOMEM, "out of memory indexing row ids");
    for (size_t i = 0; i < t->nrows; i++) {
        size_t h = (size_t)str_hash(t->rows[i].id) & (cap - 1);
        while (ids[h]) h = (h + 1) & (cap - 1);
        ids[h] = i + 1;
    }
    free(t->ids);
    t->ids = ids;
    t->idcap = cap;
    return LA_OK;
}

la_status la_table_append(la_table *t, const la_row *row, size_t *index)
{
    if (!row->id) return la_error(LA_EINVAL, "la_table_append: row without id");
    if (t->nrows == t->caprows) {
        size_t c = t->caprows ? t->caprows * 2 : 1024;
        la_row *r = realloc(t->rows, c * sizeof *r);
        if (!r) return la_error(LA_ENOMEM, "out of memory growing the row table to %zu rows", c);
        t->rows = r;
        t->caprows = c;
    }
    t->rows[t->nrows] = *row;
    t->nrows++;
    if ((t->nrows) * 2 > t->idcap) {
        LA_TRY(id_index_grow(t));
    } else {
        size_t h = (size_t)str_hash(row->id) & (t->idcap - 1);
        while (t->ids[h]) h = (h + 1) & (t->idcap - 1);
        t->ids[h] = t->nrows;
    }
    if (index) *index = t->nrows - 1;
    return LA_OK;
}

la_status la_table_set_raw_place(la_table *t, size_t row, const la_raw_place *at)
{
    if (row >= t->nrows) return la_error(LA_EINVAL, "la_table_set_raw_place: no row %zu", row);
    if (row >= t->capplaces) {
        size_t c = t->caprows;
        la_raw_place *v = realloc(t->places, c * sizeof *v);
        if (!v) return la_error(LA_ENOMEM, "out of memory recording where %zu rows lie in their files", c);
        memset(v + t->capplaces, 0, (c - t->capplaces) * sizeof *v);
        t->places = v;
        t->capplaces = c;
    }
    t->places[row] = *at;
    return LA_OK;
}

int la_table_raw_place(const la_table *t, size_t row, la_raw_place *at)
{
    if (row >= t->capplaces || !t->places[row].len) return 0;
    *at = t->places[row];
    return 1;
}

size_t la_table_find_id(const la_table *t, const char *id)
{
    if (!t->idcap) return (size_t)-1;
    size_t h = (size_t)str_hash(id) & (t->idcap - 1);
    while (t->ids[h]) {
        size_t r = t->ids[h] - 1;
        if (strcmp(t->rows[r].id, id) == 0) return r;
        h = (h + 1) & (t->idcap - 1);
    }
    return (size_t)-1;
}

size_t la_table_nrows(const la_table *t) { return t->nrows; }
la_row *la_table_rows(la_table *t) { return t->rows; }
const la_row *la_table_rows_const(const la_table *t) { return t->rows; }
