/* token_ids.h - the growable array of token ids the tokenizers append to (ids, count, capacity),
 * shared by tokenizer_wordpiece.c and tokenizer_unigram.c. */
#ifndef LA_TOKEN_IDS_H
#define LA_TOKEN_IDS_H

#include <stdint.h>
#include <stdlib.h>

#include "leakaudit.h"

/* Append id to *ids (grown with realloc; *n and *cap updated). */
static inline la_status la_token_ids_push(int32_t id, int32_t **ids, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        int32_t *p = realloc(*ids, nc * sizeof *p);
        if (!p) return la_error(LA_ENOMEM, "out of memory");
        *ids = p;
        *cap = nc;
    }
    (*ids)[(*n)++] = id;
    return LA_OK;
}

#endif /* LA_TOKEN_IDS_H */
