/*
 * table.c - the row table: partitions, input file names, rows, an arena that owns every string, and
 * an id index for uniqueness checks. Pure data: it never reads input files (with la_table_spill_to
 * its memory is mapped from spill files, la_spill.h).
 */
#include "la_alloc.h"
#include "la_arena.h"
#include "la_spill.h"
#include "leakaudit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK (1u << 20)

struct la_arena_block {
    la_arena_block *next;
    size_t used, cap;
    int spilled; /* in a spill store, which frees it */
    char data[];
};

struct la_table {
    la_arena arena;
    la_spill *spill;      /* where new strings go, or NULL: memory */
    la_spill *rowstore;   /* with spill: the stores that hold rows and places, else NULL */
    la_spill *placestore;
    la_row *rows;
    size_t nrows, caprows;
    char **parts;
    uint32_t nparts, capparts;
    char **files;
    uint32_t nfiles, capfiles;
    uint64_t *ids;        /* open addressing: id_hash << 32 | (row index + 1), 0 = empty */
    size_t idcap;         /* power of two */
    la_raw_place *places; /* per row (capplaces of them, zeroed past what was set), or NULL */
    size_t capplaces;
};

/* FNV-1a folded to 32 bits. The id index keeps it beside each row index, so growing the index and
 * probing past other ids never read their strings (which may be in a spill file). */
static uint32_t id_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (uint32_t)(h ^ h >> 32);
}

static void id_index_put(uint64_t *ids, size_t cap, uint64_t slot)
{
    size_t h = (size_t)(slot >> 32) & (cap - 1);
    while (ids[h]) h = (h + 1) & (cap - 1);
    ids[h] = slot;
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
    la_spill_close(t->spill); /* after the arena: its blocks' headers are in the store */
    for (uint32_t i = 0; i < t->nparts; i++) free(t->parts[i]);
    for (uint32_t i = 0; i < t->nfiles; i++) free(t->files[i]);
    free(t->parts);
    free(t->files);
    if (t->rowstore) {
        la_spill_close(t->rowstore);
        la_spill_close(t->placestore);
    } else {
        free(t->rows);
        free(t->places);
    }
    free(t->ids);
    free(t);
}

/* Room for n bytes at a multiple of align (a power of two) in the current block, or in a new one:
 * a request larger than a block gets a block of its own, put behind the current one, which keeps
 * taking the requests after it. */
static la_status arena_take(la_arena *a, size_t n, size_t align, char **out)
{
    la_arena_block *b = a->head;
    if (b) {
        size_t pad = (size_t)(-(uintptr_t)(b->data + b->used) & (uintptr_t)(align - 1));
        if (b->cap - b->used >= pad && b->cap - b->used - pad >= n) {
            *out = b->data + b->used + pad;
            b->used += pad + n;
            return LA_OK;
        }
    }
    size_t block = a->block ? a->block : ARENA_BLOCK, need = n + align - 1;
    size_t cap = need > block ? need : block;
    la_arena_block *nb = NULL;
    if (a->spill) {
        void *p = NULL;
        LA_TRY(la_spill_alloc(a->spill, sizeof *nb + cap, &p));
        nb = p;
        nb->spilled = 1;
    } else {
        nb = malloc(sizeof *nb + cap);
        if (!nb) return la_error(LA_ENOMEM, "out of memory for %zu bytes in an arena", n);
        la_populate(nb, sizeof *nb + cap);
        nb->spilled = 0;
    }
    nb->cap = cap;
    a->bytes += cap;
    if (b && need > block) {
        nb->next = b->next;
        b->next = nb;
    } else {
        nb->next = b;
        a->head = nb;
    }
    size_t pad = (size_t)(-(uintptr_t)nb->data & (uintptr_t)(align - 1));
    *out = nb->data + pad;
    nb->used = pad + n;
    return LA_OK;
}

la_status la_arena_alloc(la_arena *a, size_t n, char **out)
{
    if (n > SIZE_MAX / 2) return la_error(LA_ENOMEM, "a string of %zu bytes is too long to store", n);
    char *p = NULL;
    LA_TRY(arena_take(a, n + 1, 1, &p));
    p[n] = '\0';
    *out = p;
    return LA_OK;
}

la_status la_arena_take(la_arena *a, size_t n, size_t align, void **out)
{
    if (n > SIZE_MAX / 2 || !align || (align & (align - 1)) || align > 4096)
        return la_error(LA_EINVAL, "an arena cannot give %zu bytes aligned to %zu", n, align);
    char *p = NULL;
    LA_TRY(arena_take(a, n, align, &p));
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
        if (!b->spilled) free(b);
    }
    a->head = NULL;
    a->bytes = 0;
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
    t->arena.bytes += from->bytes;
    from->head = NULL;
    from->bytes = 0;
}

/* Grow the array *v of *cap elements of `size` bytes to `want` elements, in `store` (where it
 * keeps its address) or on the heap; the new elements are zero. */
static la_status grow_array(la_spill *store, void **v, size_t *cap, size_t want, size_t size, const char *what)
{
    if (want > SIZE_MAX / size) return la_error(LA_ENOMEM, "%zu %s are too many", want, what);
    if (store) {
        LA_TRY(la_spill_extend(store, want * size, v));
    } else {
        char *nv = realloc(*v, want * size);
        if (!nv) return la_error(LA_ENOMEM, "out of memory growing the table to %zu %s", want, what);
        memset(nv + *cap * size, 0, (want - *cap) * size);
        *v = nv;
    }
    *cap = want;
    return LA_OK;
}

/* Move a heap array of n elements into an empty store. */
static la_status move_to_store(la_spill *store, void **v, size_t cap, size_t size)
{
    if (!cap) return LA_OK;
    void *to = NULL;
    LA_TRY(la_spill_extend(store, cap * size, &to));
    memcpy(to, *v, cap * size);
    free(*v);
    *v = to;
    return LA_OK;
}

la_status la_table_spill_to(la_table *t, const char *dir, size_t mapped)
{
    if (t->spill) return LA_OK;
    la_spill *s = NULL, *r = NULL, *p = NULL;
    la_status st = la_spill_open(dir, &s);
    if (st == LA_OK) st = la_spill_open(dir, &r);
    if (st == LA_OK) st = la_spill_open(dir, &p);
    if (st == LA_OK) st = move_to_store(r, (void **)&t->rows, t->caprows, sizeof *t->rows);
    if (st == LA_OK) st = move_to_store(p, (void **)&t->places, t->capplaces, sizeof *t->places);
    if (st != LA_OK) {
        la_spill_close(s);
        la_spill_close(r);
        la_spill_close(p);
        return st;
    }
    la_spill_set_mapped_max(s, mapped);
    la_spill_set_mapped_max(r, mapped);
    la_spill_set_mapped_max(p, mapped);
    t->spill = s;
    t->rowstore = r;
    t->placestore = p;
    t->arena.spill = s;
    return LA_OK;
}

la_spill *la_table_spill(const la_table *t) { return t->spill; }

void la_table_arena(const la_table *t, la_arena *a, size_t block)
{
    *a = (la_arena){NULL, block, t->spill, 0};
}

size_t la_table_text_bytes(const la_table *t) { return t->arena.bytes; }

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
    uint64_t *ids = la_zalloc_n(cap, sizeof *ids);
    if (!ids) return la_error(LA_ENOMEM, "out of memory indexing row ids");
    for (size_t h = 0; h < t->idcap; h++)
        if (t->ids[h]) id_index_put(ids, cap, t->ids[h]);
    free(t->ids);
    t->ids = ids;
    t->idcap = cap;
    return LA_OK;
}

la_status la_table_append(la_table *t, const la_row *row, size_t *index)
{
    if (!row->id) return la_error(LA_EINVAL, "la_table_append: row without id");
    if (t->nrows >= UINT32_MAX - 1) return la_error(LA_ENOMEM, "more than %u rows in one table", UINT32_MAX - 2);
    if (t->nrows == t->caprows)
        LA_TRY(grow_array(t->rowstore, (void **)&t->rows, &t->caprows, t->caprows ? t->caprows * 2 : 1024, sizeof *t->rows,
                          "rows"));
    if ((t->nrows + 1) * 2 > t->idcap) LA_TRY(id_index_grow(t));
    t->rows[t->nrows] = *row;
    t->nrows++;
    id_index_put(t->ids, t->idcap, (uint64_t)id_hash(row->id) << 32 | t->nrows);
    if (index) *index = t->nrows - 1;
    return LA_OK;
}

la_status la_table_set_raw_place(la_table *t, size_t row, const la_raw_place *at)
{
    if (row >= t->nrows) return la_error(LA_EINVAL, "la_table_set_raw_place: no row %zu", row);
    if (row >= t->capplaces)
        LA_TRY(grow_array(t->placestore, (void **)&t->places, &t->capplaces, t->caprows, sizeof *t->places,
                          "row places"));
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
    uint32_t hash = id_hash(id);
    size_t h = hash & (t->idcap - 1);
    while (t->ids[h]) {
        size_t r = (size_t)(t->ids[h] & UINT32_MAX) - 1;
        if ((uint32_t)(t->ids[h] >> 32) == hash && strcmp(t->rows[r].id, id) == 0) return r;
        h = (h + 1) & (t->idcap - 1);
    }
    return (size_t)-1;
}

size_t la_table_nrows(const la_table *t) { return t->nrows; }
la_row *la_table_rows(la_table *t) { return t->rows; }
const la_row *la_table_rows_const(const la_table *t) { return t->rows; }
