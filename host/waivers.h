/*
 * waivers.h - reading a waivers file (--waivers): links a reviewer accepted, one per JSONL line or
 * CSV/TSV row, with a reason, who accepted it and the last day it holds. Not for: applying them
 * (audit/link_delta.h).
 */
#ifndef LA_HOST_WAIVERS_H
#define LA_HOST_WAIVERS_H

#include "link_delta.h"

/* Read `path` (JSONL, or CSV/TSV with a header; by extension, else by content; .gz and .zst too).
 * Each entry has exactly the fields heldout_id, seen_id, reason, accepted_by (non-empty strings),
 * expires (canonical YYYY-MM-DD) and optionally kind (family, time, exact, near or semantic;
 * absent, null or empty: every kind). Fills out (zeroed first; free with la_waivers_free whatever
 * the result). A record that breaks a rule, and two entries that overlap (the same link and kind,
 * or the same link with one of them for every kind), are LA_EINPUT with FILE:LINE: FIELD: what was
 * expected in la_last_error; no entry is skipped. An empty file holds no waivers. */
la_status la_waivers_read(const char *path, la_waivers *out /* OUT */);

#endif /* LA_HOST_WAIVERS_H */
