/*
 * fuzz_records.c - fuzz target for the input path: bytes -> records (JSONL, CSV, TSV) -> validated
 * rows or rejects. Whatever the bytes, the load either fails cleanly with a message or accounts for
 * every record: rows read = rows placed + rows rejected, and every placed row has a non-empty id.
 */
#include "fuzz_file.h"
#include "load.h"

#include "fuzz_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const exts[3] = {"jsonl", "csv", "tsv"};
    if (size == 0) return 0;
    const char *ext = exts[data[0] % 3];
    char path[96];
    if (!la_fuzz_file("records", ext, data + 1, size - 1, path)) return 0;

    la_table *t;
    if (la_table_new(&t) != LA_OK) abort();
    la_load_opts o;
    la_load_opts_default(&o);
    static const char *const known[] = {"dev", "test"};
    o.known_parts = known;
    o.nknown = 2;
    o.allow_timestamp = data[0] & 8;
    la_loader L;
    la_loader_init(&L, t, &o);
    la_status s = la_load_file(&L, path, (data[0] & 4) ? "dev" : NULL);
    if (s == LA_OK) {
        size_t read = 0, rejected = 0;
        for (size_t k = 0; k < L.nfiles; k++) read += L.files[k].rows_read, rejected += L.files[k].rows_rejected;
        LA_FUZZ_CHECK(read == la_table_nrows(t) + rejected);
        LA_FUZZ_CHECK(rejected == L.nrejects);
        const la_row *rows = la_table_rows_const(t);
        for (size_t i = 0; i < la_table_nrows(t); i++) {
            LA_FUZZ_CHECK(rows[i].id && rows[i].id[0]);
            LA_FUZZ_CHECK(la_table_find_id(t, rows[i].id) == i);
            LA_FUZZ_CHECK(rows[i].text);
        }
        for (size_t k = 0; k < L.nrejects; k++) LA_FUZZ_CHECK(L.rejects[k].nreasons > 0);
    } else {
        LA_FUZZ_CHECK(la_last_error()[0] != '\0');
    }
    la_loader_free(&L);
    la_table_free(t);
    unlink(path);
    return 0;
}
