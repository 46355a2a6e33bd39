/*
 * la_arena.h - an arena of strings (and of other memory handed out with la_arena_take): copies
 * that live until the arena is freed, in blocks that never move, so a pointer into it stays valid
 * as more is added. One thread fills an arena at a time; a
 * worker thread fills its own and hands the blocks to the row table when it is done
 * (la_table_adopt), so rows can point into text that was copied off the main thread.
 * Not for: memory freed piece by piece.
 */
#ifndef LA_ARENA_H
#define LA_ARENA_H

#include "leakaudit.h"

#include <stddef.h>

typedef struct la_arena_block la_arena_block;
typedef struct la_spill la_spill;

/* Zero-initialized it is empty and makes blocks of 1 MiB; set `block` first for another size
 * (a string longer than a block gets a block of its own size, behind the one being filled, which
 * keeps taking what comes after it). With `spill` set, blocks come from
 * that store (la_spill.h) instead of the heap, and live as long as the store. */
typedef struct la_arena {
    la_arena_block *head; /* the block being filled; the others behind it */
    size_t block;         /* bytes of a new block; 0: 1 MiB */
    la_spill *spill;      /* NULL: blocks from malloc */
    size_t bytes;         /* bytes of the blocks it holds */
} la_arena;

/* Copy n bytes of s into the arena, NUL-terminated; *out points at the copy, which lives until
 * la_arena_free (or, after la_table_adopt, as long as the table). LA_ENOMEM with a message when no
 * block can be had. */
la_status la_arena_strdup(la_arena *a, const char *s, size_t n, const char **out /* OUT */);

/* Room for n bytes and a NUL in the arena: *out points at n + 1 bytes, the last of them '\0', the
 * rest the caller's to fill. Same lifetime and failures as la_arena_strdup. */
la_status la_arena_alloc(la_arena *a, size_t n, char **out /* OUT */);

/* Room for n bytes (no NUL added) at an address that is a multiple of align (a power of two, at
 * most 4096): memory of the arena's lifetime, uninitialized, with no allocation of its own (a
 * worker's vectors that are freed together). Same failures as la_arena_strdup, LA_EINVAL for an
 * align that is no power of two. */
la_status la_arena_take(la_arena *a, size_t n, size_t align, void **out /* OUT */);

/* Free every block; the arena is empty again (its block size kept). NULL does nothing. */
void la_arena_free(la_arena *a);

/* Keep the table in spill stores (la_spill.h) in `dir` (NULL: as la_spill_open) from now
 * on: its rows and their places in their files (moved there now), and new strings, also those of
 * arenas set up with la_table_arena (strings already stored stay where they are). Pointers to rows
 * stay valid as the table grows. `mapped` bytes of the stores may stay mapped (la_spill_set_mapped_max;
 * 0: 64 MiB). Errors as la_spill_open. */
la_status la_table_spill_to(la_table *t, const char *dir, size_t mapped);

/* The table's spill store, or NULL when its strings are in memory. */
la_spill *la_table_spill(const la_table *t);

/* An empty arena (blocks of `block` bytes, 0: 1 MiB) whose blocks come from where the table keeps
 * its strings, for a worker to fill and la_table_adopt to hand over. */
void la_table_arena(const la_table *t, la_arena *a, size_t block);

/* Bytes of the blocks that hold the table's strings (those adopted included). */
size_t la_table_text_bytes(const la_table *t);

/* Move every block of `from` to the table, which frees them with itself; `from` is left empty and
 * the pointers into it stay valid as long as the table. Not thread-safe with other calls on t. */
void la_table_adopt(la_table *t, la_arena *from);

#endif /* LA_ARENA_H */
