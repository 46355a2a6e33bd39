/*
 * la_spill.h - memory backed by a file on disk, for the row table (its rows, their places and
 * strings) when the input is large.
 *
 * A spill store is an unlinked temporary file mapped into one reserved range of addresses: blocks
 * handed out stay at the same address for the life of the store, so rows point into them as into
 * memory, and every reader works unchanged. The pages are the file's: the kernel writes them back
 * and may drop them, so they are not the process's memory. A thread of the store looks every 20 ms
 * at how many file pages the process has mapped and, 64 MiB (or what la_spill_set_mapped_max says)
 * past what it maps besides the store (its code and libraries), unmaps the store's (madvise
 * MADV_DONTNEED: the data stays in the file and the page cache, the next read maps it again), so
 * the resident set holds no more of the store than that however much it holds.
 * Not for: data written by one thread and read by another without a barrier between them (a join
 * of the workers is one).
 */
#ifndef LA_SPILL_H
#define LA_SPILL_H

#include "leakaudit.h"

#include <stddef.h>

typedef struct la_spill la_spill;

/* A store in a new unlinked file of `dir` (NULL: $TMPDIR, else /var/tmp, else /tmp when only that
 * one is writable, as in a container with a read-only root). LA_EIO with the
 * directory and the reason when the file cannot be made or no range of addresses reserved. */
la_status la_spill_open(const char *dir, la_spill **out /* OUT */);

/* n bytes of the store (zero-filled, 64-byte aligned), disk space reserved for them first, so a
 * full disk is an error here (LA_EIO naming the file's directory) and never a fault on a later
 * write. Thread-safe. */
la_status la_spill_alloc(la_spill *s, size_t n, void **out /* OUT */);

/* For a store that holds one array: make its first `total` bytes usable (those past what was
 * there zero-filled) and set *base to them. The array keeps its address as it grows, so pointers
 * into it stay valid. Not with la_spill_alloc on the same store; not thread-safe. */
la_status la_spill_extend(la_spill *s, size_t total, void **base /* OUT */);

/* Bytes handed out so far (rounded up to whole pages). */
size_t la_spill_bytes(la_spill *s);

/* Let up to `bytes` of file pages (0: 64 MiB) stay mapped past what the process maps besides its
 * stores before the store's pages are unmapped. A store read several times over (the rows' text,
 * once per phase of the near tier) is read from memory, not mapped again page by page, when it
 * fits: each mapping of a page costs a fault. Thread-safe. */
void la_spill_set_mapped_max(la_spill *s, size_t bytes);

/* The directory the file was made in. */
const char *la_spill_dir(const la_spill *s);

/* Stop the release thread, unmap and close; the file is gone with it. NULL does nothing. */
void la_spill_close(la_spill *s);

#endif /* LA_SPILL_H */
