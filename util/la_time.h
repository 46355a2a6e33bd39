/*
 * la_time.h - a monotonic clock for the timings a report shows.
 */
#ifndef LA_TIME_H
#define LA_TIME_H

/* Elapsed seconds on a monotonic clock since an arbitrary point; differences are durations. */
double la_now(void);

#endif /* LA_TIME_H */
