/*
 * driver.c - runs a fuzz target without libFuzzer, so ctest exercises every target on each run:
 * first every file of the seed corpus given as arguments, then mutations of them (byte flips,
 * insertions, truncations, splices) from a fixed-seed generator. Build the targets with clang's
 * -fsanitize=fuzzer instead of this driver for open-ended fuzzing (see tests/fuzz/README.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t g_state = 0x243F6A8885A308D3ull;

static uint64_t next(void)
{
    uint64_t z = (g_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *p = malloc(1 << 20);
    *n = p ? fread(p, 1, 1 << 20, f) : 0;
    fclose(f);
    return p;
}

int main(int argc, char **argv)
{
    int rounds = 3000;
    const char *env = getenv("LA_FUZZ_ROUNDS");
    if (env) rounds = atoi(env);
    unsigned char *seeds[64];
    size_t lens[64];
    int nseeds = 0;
    for (int i = 1; i < argc && nseeds < 64; i++) {
        seeds[nseeds] = slurp(argv[i], &lens[nseeds]);
        if (!seeds[nseeds]) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        LLVMFuzzerTestOneInput(seeds[nseeds], lens[nseeds]);
        nseeds++;
    }
    if (nseeds == 0) {
        seeds[0] = (unsigned char *)strdup("\x00{\"id\":\"a\",\"text\":\"b\"}\n");
        lens[0] = strlen((char *)seeds[0] + 1) + 1;
        nseeds = 1;
    }
    unsigned char buf[8192];
    for (int r = 0; r < rounds; r++) {
        int pick = (int)(next() % (uint64_t)nseeds);
        const unsigned char *src = seeds[pick];
        size_t n = lens[pick];
        if (n > sizeof buf) n = sizeof buf;
        memcpy(buf, src, n);
        int edits = 1 + (int)(next() % 8);
        for (int e = 0; e < edits; e++) {
            uint64_t x = next();
            size_t at = n ? (size_t)(x >> 8) % n : 0;
            switch (x % 5) {
            case 0: if (n) buf[at] ^= (unsigned char)(1u << ((x >> 40) % 8)); break;
            case 1: if (n) buf[at] = (unsigned char)(x >> 32); break;
            case 2: if (n < sizeof buf) { memmove(buf + at + 1, buf + at, n - at); buf[at] = (unsigned char)(x >> 24); n++; } break;
            case 3: n = at; break;
            default: { /* splice a piece of another seed */
                int other = (int)((x >> 16) % (uint64_t)nseeds);
                const unsigned char *o = seeds[other];
                size_t on = lens[other];
                size_t take = on ? (size_t)(x >> 20) % on : 0;
                if (at + take > sizeof buf) take = sizeof buf - at;
                memcpy(buf + at, o, take);
                if (at + take > n) n = at + take;
            }
            }
        }
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("%d seeds and %d mutated inputs: no failure\n", nseeds, rounds);
    for (int i = 0; i < nseeds; i++) free(seeds[i]);
    return 0;
}
