/*
 * time.c - la_now (la_time.h).
 */
#include "la_time.h"

#include <time.h>

double la_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
