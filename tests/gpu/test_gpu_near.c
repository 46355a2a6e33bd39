/* test_gpu_near.c - the near-copy CUDA twins give the CPU's integers: shingle counts, MinHash
 * signatures and LSH band keys (from text, fused on the device, and from uploaded shingle hashes),
 * and SimHash fingerprints, on a generated corpus with empty, one-word, long, UTF-8, malformed UTF-8
 * and punctuation-only documents, for word and character shingles, k = 128, 200 and 1024, and with a
 * device memory limit small enough to force many chunks. Exits 77 without a device. */
#include <string.h>

#include "gpu_test.h"
#include "near_cuda.h"
#include "near_kernels.h"

static const char *words[] = {"the", "cat", "sat", "on", "mat", "Zürich", "naïve", "数学", "x1",
                              "2024", "résumé", "answer", "question", "dog", "over", "lazy"};

/* ndocs documents, concatenated; off has ndocs + 1 entries. */
static char *corpus(size_t ndocs, uint64_t **off_out) {
    size_t cap = 1 << 20, len = 0;
    char *t = malloc(cap);
    uint64_t *off = malloc((ndocs + 1) * sizeof *off);
    for (size_t i = 0; i < ndocs; i++) {
        off[i] = len;
        size_t nw;
        switch (i % 11) {
        case 0: nw = 0; break;                      /* empty */
        case 1: nw = 1; break;                      /* fewer tokens than n */
        case 2: nw = 2000 + rnd() % 3000; break;    /* long */
        default: nw = 5 + rnd() % 200;
        }
        for (size_t w = 0; w < nw; w++) {
            if (len + 64 > cap) t = realloc(t, cap *= 2);
            const char *x = words[rnd() % (sizeof words / sizeof *words)];
            memcpy(t + len, x, strlen(x));
            len += strlen(x);
            uint64_t r = rnd() % 20;
            if (r == 0) t[len++] = ',';
            if (r == 1) t[len++] = (char)0xC3; /* a lone lead byte: malformed UTF-8 */
            if (r == 2) { t[len++] = ' '; t[len++] = '\t'; }
            t[len++] = ' ';
        }
        if (i % 11 == 3 && len + 8 < cap) { memcpy(t + len, "?!...", 5); len += 5; }
    }
    off[ndocs] = len;
    *off_out = off;
    return t;
}

int main(void) {
    require_device();
    const size_t ndocs = 3000;
    uint64_t *off;
    char *text = corpus(ndocs, &off);
    const int ks[] = {128, 200, 1024};
    const int kinds[][2] = {{LA_SHINGLE_WORD, 3}, {LA_SHINGLE_CHAR, 5}, {LA_SHINGLE_WORD, 1}};
    size_t maxlen = 0;
    for (size_t i = 0; i < ndocs; i++)
        if (off[i + 1] - off[i] > maxlen) maxlen = off[i + 1] - off[i];
    uint64_t *buf = malloc(la_shingle_bound(maxlen) * sizeof *buf);

    for (size_t ki = 0; ki < sizeof kinds / sizeof *kinds; ki++) {
        int kind = kinds[ki][0], n = kinds[ki][1];
        /* CPU shingles of every document, as CSR (for the hash path) */
        uint64_t *hoff = malloc((ndocs + 1) * sizeof *hoff);
        size_t total = 0;
        for (size_t i = 0; i < ndocs; i++) total += la_shingle_bound(off[i + 1] - off[i]);
        uint64_t *hs = malloc((total + 1) * sizeof *hs);
        uint32_t *cnt = malloc(ndocs * sizeof *cnt);
        size_t pos = 0;
        for (size_t i = 0; i < ndocs; i++) {
            hoff[i] = pos;
            size_t m = la_cpu_shingle(text + off[i], off[i + 1] - off[i], kind, n, hs + pos,
                                      la_shingle_bound(off[i + 1] - off[i]));
            cnt[i] = (uint32_t)m;
            pos += m;
        }
        hoff[ndocs] = pos;

        for (size_t kk = 0; kk < sizeof ks / sizeof *ks; kk++) {
            int k = ks[kk], rows = 8, bands = k / rows;
            uint32_t *sc = malloc(ndocs * k * sizeof *sc), *sg = malloc(ndocs * k * sizeof *sg);
            uint32_t *sh = malloc(ndocs * k * sizeof *sh), *cg = malloc(ndocs * sizeof *cg);
            uint64_t *kc = malloc(ndocs * bands * sizeof *kc), *kg = malloc(ndocs * bands * sizeof *kg);
            uint64_t *kh = malloc(ndocs * bands * sizeof *kh);
            for (size_t i = 0; i < ndocs; i++) {
                la_cpu_minhash(hs + hoff[i], hoff[i + 1] - hoff[i], k, sc + i * k);
                la_cpu_lsh_keys(sc + i * k, bands, rows, kc + i * bands);
            }
            la_cuda_near_opts o;
            la_cuda_near_opts_default(&o);
            if (kk == 1) o.mem_limit = 4u << 20; /* many small chunks through both streams */
            la_cuda_near_stats st = {0};
            CHECK_OK(la_cuda_shingle_minhash(text, off, ndocs, kind, n, k, bands, rows, &o, sg, kg,
                                             cg, &st));
            CHECK_OK(la_cuda_minhash(hs, hoff, ndocs, k, bands, rows, &o, sh, kh, NULL));
            size_t bad_cnt = 0, bad_sig = 0, bad_sigh = 0, bad_keys = 0, bad_keysh = 0;
            for (size_t i = 0; i < ndocs; i++) bad_cnt += cg[i] != cnt[i];
            for (size_t i = 0; i < ndocs * (size_t)k; i++) bad_sig += sg[i] != sc[i], bad_sigh += sh[i] != sc[i];
            for (size_t i = 0; i < ndocs * (size_t)bands; i++) bad_keys += kg[i] != kc[i], bad_keysh += kh[i] != kc[i];
            CHECK(bad_cnt == 0, "kind %d n %d: %zu shingle counts differ", kind, n, bad_cnt);
            CHECK(bad_sig == 0, "kind %d n %d k %d: %zu slots differ (from text)", kind, n, k, bad_sig);
            CHECK(bad_sigh == 0, "kind %d n %d k %d: %zu slots differ (from hashes)", kind, n, k, bad_sigh);
            CHECK(bad_keys == 0 && bad_keysh == 0, "k %d: band keys differ (%zu, %zu)", k, bad_keys, bad_keysh);
            CHECK(kk != 1 || st.chunks > 2, "the memory limit should force several chunks, got %zu", st.chunks);
            printf("kind %d n %d k %3d: %zu docs, %zu chunks, signatures identical\n", kind, n, k, ndocs,
                   st.chunks);
            free(sc), free(sg), free(sh), free(cg), free(kc), free(kg), free(kh);
        }

        /* SimHash over sorted multisets */
        for (size_t i = 0; i < ndocs; i++) la_cpu_shingle_sort(hs + hoff[i], hoff[i + 1] - hoff[i]);
        uint64_t *fc = malloc(ndocs * sizeof *fc), *fg = malloc(ndocs * sizeof *fg);
        for (size_t i = 0; i < ndocs; i++) fc[i] = la_cpu_simhash(hs + hoff[i], hoff[i + 1] - hoff[i]);
        CHECK_OK(la_cuda_simhash(hs, hoff, ndocs, NULL, fg, NULL));
        size_t bad = 0;
        for (size_t i = 0; i < ndocs; i++) bad += fc[i] != fg[i];
        CHECK(bad == 0, "kind %d n %d: %zu SimHash fingerprints differ", kind, n, bad);
        printf("kind %d n %d: SimHash identical\n", kind, n);
        free(fc), free(fg), free(hs), free(hoff), free(cnt);
    }

    /* bad arguments are statuses, not crashes */
    uint32_t s1[4];
    CHECK(la_cuda_minhash(NULL, off, 1, 0, 0, 0, NULL, s1, NULL, NULL) == LA_EINVAL, "k 0");
    CHECK(la_cuda_shingle_minhash(text, off, 1, 7, 3, 4, 0, 0, NULL, s1, NULL, NULL, NULL) == LA_EINVAL,
          "bad kind");
    free(buf);
    free(text);
    free(off);
    return finish("test_gpu_near");
}
