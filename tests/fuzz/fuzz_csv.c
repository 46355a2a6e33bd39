/*
 * fuzz_csv.c - fuzz target for the CSV and TSV readers alone (la_records_each in memory): whatever
 * the bytes, every record handed on is a JSON object of strings named by the header, every reject
 * points into the input (its text is never lost or invented), record lines only grow, and a failure
 * comes with a message. The first byte picks CSV or TSV and a small --max-row-bytes or none.
 */
#include "records.h"

#include "fuzz_check.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct seen {
    const char *begin, *end;
    uint32_t last_line;
    size_t records, rejects;
} seen;

static la_status on_record(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                           const char *parse_error)
{
    seen *s = ctx;
    LA_FUZZ_CHECK(line >= s->last_line);
    s->last_line = line;
    if (!rec) {
        LA_FUZZ_CHECK(parse_error && parse_error[0]);
        LA_FUZZ_CHECK(raw >= s->begin && raw + rawlen <= s->end); /* the text of the row as it stands in the file */
        s->rejects++;
        return LA_OK;
    }
    LA_FUZZ_CHECK(json_object_is_type(rec, json_type_object));
    json_object_object_foreach(rec, key, val) {
        LA_FUZZ_CHECK(key[0] || 1);
        LA_FUZZ_CHECK(json_object_is_type(val, json_type_string));
    }
    LA_FUZZ_CHECK(raw && rawlen > 0);
    s->records++;
    return LA_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    la_input in;
    memset(&in, 0, sizeof in);
    in.len = size - 1;
    in.data = malloc(in.len + 1);
    if (!in.data) return 0;
    memcpy(in.data, data + 1, in.len);
    in.data[in.len] = '\0';
    in.compression = "none";
    la_limits lim;
    la_limits_default(&lim);
    if (data[0] & 2) lim.max_row_bytes = 16 + (data[0] >> 3);
    seen s = {in.data, in.data + in.len, 0, 0, 0};
    la_status st = la_records_each(&in, (data[0] & 1) ? "f.tsv" : "f.csv", (data[0] & 1) ? LA_FMT_TSV : LA_FMT_CSV,
                                   &lim, on_record, &s);
    if (st != LA_OK) LA_FUZZ_CHECK(la_last_error()[0] != '\0');
    free(in.data);
    return 0;
}
