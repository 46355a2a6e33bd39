"""hostile_cases.py - writes the inputs of tests/cli/hostile.sh into the current directory and prints
one case a line: NAME, CLASS, FILE, EXPECTED and EXTRA-ARGS separated by
U+001F (so that empty fields survive `read`).

CLASS says what the run must do: `row` (a bad record: exit 2 with EXPECTED, FILE:LINE: FIELD: ...;
under --on-invalid reject it is one reject with its line and nothing else is lost), `file` (the
whole input is refused: exit 2 with EXPECTED, also under reject) or `usage` (a bad option: exit 2).
Not a test by itself (ctest runs only *.sh)."""
import gzip
import json
import struct
import sys

cases = []


def case(name, cls, fname, data, expect, extra=""):
    if fname and data is not None:
        with open(fname, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    cases.append((name, cls, fname, expect, extra))


GOOD = '{"id":"g1","text":"a good row to keep"}\n'


def good(name):
    """A good row whose id no other case file uses (all row cases are also read in one run)."""
    return GOOD.replace('"g1"', '"g-%s"' % name)


def jsonl_row(name, line_text, expect, good_before=True):
    """A JSONL test file: one good row, then the bad one on line 2."""
    fname = "row_%s.jsonl" % name
    body = (good(name) if good_before else "") + line_text + "\n"
    line = 2 if good_before else 1
    case(name, "row", fname, body.encode("utf-8") if isinstance(body, str) else body,
         "%s:%d: %s" % (fname, line, expect))


# ---- JSON syntax that json-c accepts or rejects: every one is a reject with its line ----
syntax = {
    "trailing_comma_obj": ('{"id":"b1","text":"x",}', "record: expected one JSON object per line"),
    "trailing_comma_arr": ('{"id":"b1","text":"x","a":[1,]}', "record: expected one JSON object per line"),
    "single_quoted_key": ("{'id':\"b1\",\"text\":\"x\"}", "record: expected one JSON object per line (RFC 8259: keys and strings take double quotes"),
    "single_quoted_value": ('{"id":\'b1\',"text":"x"}', "record: expected one JSON object per line"),
    "comment_block": ('/* c */{"id":"b1","text":"x"}', "record: expected one JSON object per line"),
    "comment_line_after": ('{"id":"b1","text":"x"} // c', "record: expected one JSON object per line"),
    "nan": ('{"id":"b1","text":"x","v":NaN}', "record: expected one JSON object per line (RFC 8259: expected a value"),
    "infinity": ('{"id":"b1","text":"x","v":Infinity}', "record: expected one JSON object per line (RFC 8259: expected a value"),
    "neg_infinity": ('{"id":"b1","text":"x","v":-Infinity}', "record: expected one JSON object per line (RFC 8259: not a JSON number"),
    "leading_zero": ('{"id":"b1","text":"x","v":007}', "record: expected one JSON object per line"),
    "trailing_dot": ('{"id":"b1","text":"x","v":1.}', "record: expected one JSON object per line (RFC 8259: not a JSON number"),
    "leading_dot": ('{"id":"b1","text":"x","v":.5}', "record: expected one JSON object per line"),
    "plus_sign": ('{"id":"b1","text":"x","v":+1}', "record: expected one JSON object per line"),
    "hex_number": ('{"id":"b1","text":"x","v":0x10}', "record: expected one JSON object per line"),
    "raw_tab": ('{"id":"b1","text":"a\tb"}', "record: expected one JSON object per line (RFC 8259: a control character"),
    "raw_control": ('{"id":"b1","text":"a\x01b"}', "record: expected one JSON object per line (RFC 8259: a control character"),
    "bad_escape": ('{"id":"b1","text":"a\\qb"}', "record: expected one JSON object per line"),
    "short_unicode_escape": ('{"id":"b1","text":"a\\u12"}', "record: expected one JSON object per line"),
    "duplicate_key": ('{"id":"b1","text":"x","text":"y"}', "record: expected one JSON object per line (RFC 8259: the same key twice"),
    "duplicate_id_key": ('{"id":"b1","id":"b2","text":"x"}', "record: expected one JSON object per line (RFC 8259: the same key twice"),
    "duplicate_escaped_key": ('{"id":"b1","text":"x","\\u0074ext":"y"}', "record: expected one JSON object per line (RFC 8259: the same key twice"),
    "duplicate_nested_key": ('{"id":"b1","text":"x","m":{"k":1,"k":2}}', "record: expected one JSON object per line (RFC 8259: the same key twice"),
    "unterminated_string": ('{"id":"b1","text":"x}', "record: expected one JSON object per line"),
    "unclosed_object": ('{"id":"b1","text":"x"', "record: expected one JSON object per line"),
    "extra_text": ('{"id":"b1","text":"x"} junk', "record: expected one JSON object per line"),
    "two_objects": ('{"id":"b1","text":"x"}{"id":"b2","text":"y"}', "record: expected one JSON object per line"),
    "array_line": ('[{"id":"b1","text":"x"}]', "record: expected a JSON object, got another JSON value"),
    "string_line": ('"just a string"', "record: expected a JSON object, got another JSON value"),
    "number_line": ('42', "record: expected one JSON object per line"),
    "null_line": ('null', "record: expected one JSON object per line"),
    "bare_word": ('hello', "record: expected one JSON object per line"),
    "missing_colon": ('{"id" "b1","text":"x"}', "record: expected one JSON object per line"),
    "missing_comma": ('{"id":"b1" "text":"x"}', "record: expected one JSON object per line"),
    "capital_true": ('{"id":"b1","text":"x","v":True}', "record: expected one JSON object per line"),
    "deep_nesting": ('{"id":"b1","text":"x","v":' + "[" * 200 + "]" * 200 + "}", "record: expected one JSON object per line"),
    "bom_mid_file": ('\ufeff{"id":"b1","text":"x"}', "record: expected one JSON object per line"),
}
for name, (text, expect) in syntax.items():
    jsonl_row(name, text, expect)

# ---- invalid UTF-8 and NUL ----
utf8 = {
    "utf8_lone_continuation": b'{"id":"b1","text":"a\x80b"}',
    "utf8_overlong": b'{"id":"b1","text":"a\xc0\xafb"}',
    "utf8_surrogate": b'{"id":"b1","text":"a\xed\xa0\x80b"}',
    "utf8_truncated": b'{"id":"b1","text":"a\xe2\x82"}',
    "utf8_beyond_10ffff": b'{"id":"b1","text":"a\xf4\x90\x80\x80"}',
    "utf8_in_id": b'{"id":"b\xff1","text":"x"}',
    "utf8_in_key": b'{"id":"b1","text":"x","k\xfe":1}',
}
for name, raw in utf8.items():
    fname = "row_%s.jsonl" % name
    case(name, "row", fname, good(name).encode() + raw + b"\n", "%s:2: " % fname)
jsonl_row("raw_nul_byte", '{"id":"b1","text":"a\x00b"}', "record: expected one JSON object per line")
jsonl_row("nul_escape_id", '{"id":"b\\u00001","text":"x"}', "id: contains U+0000 (NUL)")
jsonl_row("nul_escape_text", '{"id":"b1","text":"x\\u0000"}', "text: contains U+0000 (NUL)")
jsonl_row("nul_escape_family", '{"id":"b1","text":"x","family":"\\u0000"}', "family: contains U+0000 (NUL)")
jsonl_row("nul_escape_label", '{"id":"b1","text":"x","label":"a\\u0000"}', "label: contains U+0000 (NUL)")

# ---- fields of the wrong type or value ----
fields = {
    "id_missing": ('{"text":"x"}', "id: missing; expected a non-empty string"),
    "id_empty": ('{"id":"","text":"x"}', "id: empty; expected a non-empty string"),
    "id_number": ('{"id":7,"text":"x"}', "id: expected a non-empty string, got a number"),
    "id_null": ('{"id":null,"text":"x"}', "id: missing; expected a non-empty string"),
    "id_array": ('{"id":["b1"],"text":"x"}', "id: expected a non-empty string, got an array"),
    "id_object": ('{"id":{"v":"b1"},"text":"x"}', "id: expected a non-empty string, got an object"),
    "id_bool": ('{"id":true,"text":"x"}', "id: expected a non-empty string, got a boolean"),
    "id_duplicate": ('{"id":"g-id_duplicate","text":"again"}', "id: duplicate id 'g-id_duplicate'"),
    "text_missing": ('{"id":"b1"}', "text: missing; expected a string"),
    "text_number": ('{"id":"b1","text":3}', "text: expected a string, got a number"),
    "text_array": ('{"id":"b1","text":["x"]}', "text: expected a string, got an array"),
    "text_null": ('{"id":"b1","text":null}', "text: missing; expected a string"),
    "family_bool": ('{"id":"b1","text":"x","family":false}', "family: expected a string or an integer, got a boolean"),
    "family_object": ('{"id":"b1","text":"x","family":{}}', "family: expected a string or an integer, got an object"),
    "family_array": ('{"id":"b1","text":"x","family":[1]}', "family: expected a string or an integer, got an array"),
    "family_huge_number": ('{"id":"b1","text":"x","family":' + "9" * 300 + '}', "family: a number of 300 characters"),
    "label_object": ('{"id":"b1","text":"x","label":{}}', "label: expected a string, number or boolean, got an object"),
    "date_short": ('{"id":"b1","text":"x","available_on":"2026-7-1"}', "available_on: expected a date YYYY-MM-DD"),
    "date_impossible": ('{"id":"b1","text":"x","available_on":"2026-02-30"}', "available_on: expected a date YYYY-MM-DD"),
    "date_month_13": ('{"id":"b1","text":"x","available_on":"2026-13-01"}', "available_on: expected a date YYYY-MM-DD"),
    "date_timestamp": ('{"id":"b1","text":"x","available_on":"2026-01-01T00:00:00Z"}', "available_on: expected a date YYYY-MM-DD"),
    "date_number": ('{"id":"b1","text":"x","available_on":20260101}', "available_on: expected a date string YYYY-MM-DD, got a number"),
    "date_slashes": ('{"id":"b1","text":"x","available_on":"2026/01/01"}', "available_on: expected a date YYYY-MM-DD"),
    "date_fullwidth": ('{"id":"b1","text":"x","available_on":"\uff12\uff10\uff12\uff16-01-01"}', "available_on: expected a date YYYY-MM-DD"),
    "score_string_neg": ('{"id":"b1","text":"x","score":"-1"}', "score: expected a number in [0, 1], got '-1'"),
    "score_neg": ('{"id":"b1","text":"x","score":-1}', "score: expected a number in [0, 1], got a number"),
    "score_hex": ('{"id":"b1","text":"x","score":"0x1"}', "score: expected a number in [0, 1], got '0x1'"),
    "score_two": ('{"id":"b1","text":"x","score":2}', "score: expected a number in [0, 1], got a number"),
    "score_word": ('{"id":"b1","text":"x","score":"yes"}', "score: expected a number in [0, 1], got 'yes'"),
    "score_object": ('{"id":"b1","text":"x","score":{}}', "score: expected a number in [0, 1], got an object"),
    "score_huge_exp": ('{"id":"b1","text":"x","score":1e400}', "score: expected a number in [0, 1], got a number"),
}
for name, (text, expect) in fields.items():
    jsonl_row(name, text, expect)

# split field values: a file of rows that carry their partition
for name, (text, expect) in {
    "split_unknown": ('{"id":"b1","text":"x","split":"holdout"}', "split: unknown partition 'holdout'"),
    "split_reserved": ('{"id":"b1","text":"x","split":"clusters"}', "split: unknown partition 'clusters'"),
    "split_number": ('{"id":"b1","text":"x","split":1}', "split: expected a partition name, got a number"),
    "split_missing": ('{"id":"b1","text":"x"}', "split: missing; expected a partition name"),
}.items():
    fname = "split_%s.jsonl" % name
    case(name, "split-row", fname, '{"id":"g-%s","text":"a good row","split":"test"}\n' % name + text + "\n",
         "%s:2: %s" % (fname, expect))

# ---- CSV and TSV ----
csv = {
    "csv_ragged_short": ("id,text\ng1,good\nb1\n", "record: expected 2 fields as in the header row, got 1"),
    "csv_ragged_long": ("id,text\ng1,good\nb1,x,y\n", "record: expected 2 fields as in the header row, got 3"),
    "csv_quote_inside": ('id,text\ng1,good\nb1,a "quoted" word\n', "record: malformed CSV"),
    "csv_text_after_quote": ('id,text\ng1,good\nb1,"x"y\n', "record: malformed CSV"),
    "csv_invalid_utf8": (b"id,text\ng1,good\nb1,a\xffb\n", "text: invalid UTF-8"),
    "csv_nul_cell": ("id,text\ng1,good\nb\x001,x\n", ""),
    "csv_empty_id": ("id,text\ng1,good\n,x\n", "id: empty; expected a non-empty string"),
    "csv_score_word": ("id,text,score\ng1,good,1\nb1,x,high\n", "score: expected a number in [0, 1], got 'high'"),
}
for name, (body, expect) in csv.items():
    body = body.replace("g1,", "g-%s," % name) if isinstance(body, str) else body.replace(b"g1,", b"g-%s," % name.encode())
    fname = "%s.csv" % name
    case(name, "row", fname, body, "%s:3: %s" % (fname, expect))
case("csv_duplicate_header", "file", "csv_duplicate_header.csv", "id,text,id\ng1,good,x\n",
     "csv_duplicate_header.csv:1: header: column 'id' appears twice")
case("csv_bad_quote_header", "file", "csv_bad_quote_header.csv", 'id,te"xt\ng1,good\n',
     "csv_bad_quote_header.csv:1: header: malformed CSV")
case("tsv_ragged", "row", "tsv_ragged.tsv", "id\ttext\ng-tsv\tgood\nb1\tx\ty\n",
     "tsv_ragged.tsv:3: record: expected 2 fields as in the header row, got 3")
case("tsv_duplicate_header", "file", "tsv_duplicate_header.tsv", "text\ttext\ng1\tgood\n",
     "tsv_duplicate_header.tsv:1: header: column 'text' appears twice")

# ---- limits: long rows, many rows, compression bombs ----
big_row = '{"id":"b1","text":"' + "word " * ((2 << 20) // 5) + '"}'
jsonl_row("row_over_limit", big_row, "record: %d bytes, over the limit of 1048576 (--max-row-bytes)" % len(big_row))
case("csv_row_over_limit", "row", "csv_row_over_limit.csv", "id,text\ng-csvlong,good\nb1," + "w" * (2 << 20) + "\n",
     "csv_row_over_limit.csv:3: record: ")
case("tsv_row_over_limit", "row", "tsv_row_over_limit.tsv", "id\ttext\ng-tsvlong\tgood\nb1\t" + "w" * (2 << 20) + "\n",
     "tsv_row_over_limit.tsv:3: record: ")
case("small_row_limit", "file-row", "small_row_limit.jsonl", GOOD + '{"id":"b1","text":"' + "x" * 200 + '"}\n',
     "small_row_limit.jsonl:2: record: 221 bytes, over the limit of 100 (--max-row-bytes)", "--max-row-bytes 100")
case("too_many_rows", "file", "too_many_rows.jsonl",
     "".join('{"id":"r%d","text":"row %d"}\n' % (i, i) for i in range(101)),
     "too_many_rows.jsonl:101: record: more than 100 rows in one input", "--max-rows 100")
case("input_over_limit", "file", "input_over_limit.jsonl", GOOD * 2000,
     "input_over_limit.jsonl: more than 65536 bytes; raise --max-input-bytes", "--max-input-bytes 64K")


def gzip_bomb(prefix, fill, total, suffix):
    """Concatenated gzip members: `total` bytes of `fill` between prefix and suffix, about 1 KB per MB."""
    chunk = gzip.compress(fill * (16 << 20), 9)
    out = [gzip.compress(prefix, 9)]
    out += [chunk] * (total // (16 << 20))
    out.append(gzip.compress(suffix, 9))
    return b"".join(out)


bomb = gzip_bomb(b'{"id":"b1","text":"', b"a", 1 << 30, b'"}\n')
case("gzip_bomb_one_row", "file", "gzip_bomb_one_row.jsonl.gz", bomb,
     "gzip_bomb_one_row.jsonl.gz: decompresses to more than")
case("gzip_bomb_ratio_off", "file", "gzip_bomb_ratio_off.jsonl.gz", bomb,
     "gzip_bomb_ratio_off.jsonl.gz: more than 67108864 bytes after decompression",
     "--max-ratio 0 --max-input-bytes 64M")
case("gzip_corrupt", "file", "gzip_corrupt.jsonl.gz", gzip.compress(GOOD.encode())[:-6] + b"\x00" * 6,
     "gzip_corrupt.jsonl.gz: corrupt or truncated gzip data")
case("gzip_truncated", "file", "gzip_truncated.jsonl.gz", gzip.compress((GOOD * 50).encode())[:40],
     "gzip_truncated.jsonl.gz: corrupt or truncated gzip data")
case("gzip_magic_only", "file", "gzip_magic_only.jsonl.gz", b"\x1f\x8b", "gzip_magic_only.jsonl.gz: corrupt or truncated gzip data")
case("zstd_truncated", "file", "zstd_truncated.jsonl.zst", b"\x28\xb5\x2f\xfd\x24\x10", "zstd_truncated.jsonl.zst: ")
case("zstd_garbage", "file", "zstd_garbage.jsonl.zst", b"\x28\xb5\x2f\xfd" + b"\xff" * 32, "zstd_garbage.jsonl.zst: corrupt zstd data")
# the zstd bombs are made by hostile.sh with the zstd program (no zstd module in Python)
cases.append(("zstd_bomb", "file", "zstd_bomb.jsonl.zst", "zstd_bomb.jsonl.zst: decompresses to more than", ""))
cases.append(("zstd_bomb_many_rows", "file", "zstd_bomb_many_rows.jsonl.zst",
              "zstd_bomb_many_rows.jsonl.zst: decompresses to more than", ""))


# ---- .npy embeddings (given with --embeddings test=FILE) ----
def npy(shape, data=b"", descr="<f4", fortran="False", version=1):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    pad = (64 - (10 + len(d) + 1) % 64) % 64
    h = (d + " " * pad + "\n").encode()
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<H", len(h)) + h + data


npys = {
    "npy_huge_shape": (npy("(1, 4000000000)", b"\0" * 40), "row 0: file ends early (header says 1 rows)"),
    "npy_short": (npy("(1, 4)", b"\0" * 8), "row 0: file ends early"),
    "npy_long": (npy("(1, 2)", b"\0" * 16), "data continues past the 1 rows"),
    "npy_bad_magic": (b"NUMPY" + b"\0" * 60, "not a .npy file (bad magic)"),
    "npy_f8": (npy("(1, 2)", b"\0" * 16, descr="<f8"), "dtype '<f8' is not supported"),
    "npy_fortran": (npy("(1, 2)", b"\0" * 8, fortran="True"), "array is in Fortran order"),
    "npy_3d": (npy("(1, 1, 2)", b"\0" * 8), "array has 3 dimensions"),
    "npy_nan": (npy("(1, 2)", struct.pack("<ff", 1.0, float("nan"))), "row 0: column 1: value is NaN"),
    "npy_version_9": (npy("(1, 2)", b"\0" * 8, version=9), "unsupported .npy format version"),
    "npy_wrong_rows": (npy("(3, 2)", b"\0" * 24), "3 rows, but the partition has 1 input rows"),
}
for name, (data, expect) in npys.items():
    fname = "%s.npy" % name
    case(name, "npy", fname, data, "%s: %s" % (fname, expect))

# ---- options ----
usage = {
    "opt_containment_above_one": ("--containment-threshold 1.5", "--containment-threshold 1.5: expected a share"),
    "opt_near_threshold_hex": ("--near-threshold 0x1", "--near-threshold 0x1: expected a number"),
    "opt_near_threshold_zero": ("--near-threshold 0", "--near-threshold 0: expected a number"),
    "opt_empty_text_field": ("--text-field=", "--text-field '': expected a field name"),
    "opt_empty_id_field": ("--id-field=", "--id-field '': expected a field name"),
    "opt_part_reserved": ("--part clusters=good.jsonl", "the partition name 'clusters' is reserved"),
    "opt_part_reserved_case": ("--part Nearest=good.jsonl", "the partition name 'Nearest' is reserved"),
    "opt_heldout_reserved": ("--heldout within_pairs", "the partition name 'within_pairs' is reserved"),
    "opt_parts_reserved": ("--parts dev,report", "the partition name 'report' is reserved"),
    "opt_part_bad_name": ("--part a.b=good.jsonl", "expected a partition name"),
    "opt_threads": ("--threads 1000", "--threads 1000: expected a number from 0 to 256"),
    "opt_cutoff": ("--cutoff 2026-02-30", "--cutoff 2026-02-30: expected a date"),
    "opt_max_row_bytes": ("--max-row-bytes 12Q", "--max-row-bytes 12Q: expected a whole number"),
    "opt_max_rows_neg": ("--max-rows -5", "--max-rows -5: expected a whole number"),
    "opt_max_ratio": ("--max-ratio 0.5", "--max-ratio 0.5: expected a number of at least 1"),
    "opt_max_input_overflow": ("--max-input-bytes 99999999999999999999", "too large"),
    "opt_on_invalid": ("--on-invalid skip", "--on-invalid skip: expected fail or reject"),
    "opt_stdin_twice": ("--part a=- --part b=-", "standard input ('-') can be read only once"),
    "opt_unknown": ("--frobnicate", "unknown option or missing value"),
}
for name, (args, expect) in usage.items():
    case(name, "usage", "", None, expect, args)

with open("good.jsonl", "w") as f:
    f.write('{"id":"d1","text":"a seen row"}\n{"id":"d2","text":"another seen row"}\n')
for c in cases:
    print("\x1f".join(c))
