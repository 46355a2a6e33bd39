/*
 * la_scan.h - byte scans the readers run over every input byte: the end of a run of ASCII, and of a
 * run of JSON string bytes that need no attention. 64 bytes at a time where the CPU has AVX-512
 * (F + BW; the last, partial block by a masked load, which reads no byte past the text), 8 at a time
 * elsewhere. Not for: decoding or validating what the run stops at (the callers do).
 */
#ifndef LA_SCAN_H
#define LA_SCAN_H

#include <stddef.h>

/* Bytes of s[0 .. n) before the first byte >= 0x80: n when there is none. */
size_t la_scan_ascii(const void *s, size_t n);

/* Bytes of s[0 .. n) before the first '"', '\\' or byte below 0x20: n when there is none. */
size_t la_scan_json_plain(const void *s, size_t n);

/* Whether the scans take their 64-byte loops: the CPU has AVX-512 F and BW, and la_scan_portable
 * has not turned them off. Other byte loops (normalization's) follow the same choice. */
int la_scan_wide(void);

/* For tests: 1 makes the scans, and the loops that follow la_scan_wide, take the 8-byte loops even
 * where the CPU has AVX-512 (0 gives it back the CPU's choice); returns whether the CPU has AVX-512
 * F and BW (0 on other hosts). */
int la_scan_portable(int portable);

#endif /* LA_SCAN_H */
