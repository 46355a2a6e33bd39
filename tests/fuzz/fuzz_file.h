/*
 * fuzz_file.h - the fuzz targets that read through a path write their input to a scratch file of
 * their own (one per process, so parallel fuzzers do not share it).
 */
#ifndef LA_FUZZ_FILE_H
#define LA_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

/* Write data[0..size) to /tmp/la-fuzz-PID-TAG.EXT; the path goes into path. 0 when it cannot. */
static inline int la_fuzz_file(const char *tag, const char *ext, const uint8_t *data, size_t size, char path[96])
{
    snprintf(path, 96, "/tmp/la-fuzz-%d-%s.%s", (int)getpid(), tag, ext);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

#endif /* LA_FUZZ_FILE_H */
