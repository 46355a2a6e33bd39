/*
 * baseline.h - reading an earlier run's output folder as the baseline of this one (--baseline):
 * the links of its pairs.jsonl and the time rows of its report.json. Not for: the comparison
 * (audit/link_delta.h).
 */
#ifndef LA_HOST_BASELINE_H
#define LA_HOST_BASELINE_H

#include "link_delta.h"

/* Read the folder dir that `leakaudit audit` wrote: pairs.jsonl (every line a link with id_a,
 * split_a, id_b, split_b, kinds, grade and gates; text_hash_a and text_hash_b where that run had
 * --baseline or --waivers) and report.json (its command must be audit; findings.time gives the
 * time rows). Fills out (zeroed first; free with la_baseline_free whatever the result). A missing
 * folder or file, a line that is not such a link, or two lines naming one link are LA_EINPUT with
 * FILE:LINE: FIELD: what was expected in la_last_error. */
la_status la_baseline_read(const char *dir, la_baseline *out /* OUT */);

#endif /* LA_HOST_BASELINE_H */
