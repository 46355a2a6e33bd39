/*
 * cmd_doctor.c - `leakaudit doctor`: what this build can do and what this machine offers: build
 * features, devices, library versions, and a self-check of the CPU path.
 */
#include "commands.h"
#include "device.h"
#include "embed_lexical.h"
#include "la_cpus.h"
#include "leakaudit.h"
#include "near_kernels.h"
#include "normalize.h"
#include "simtile_i8.h"

#include <json-c/json_c_version.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

static int check(const char *what, int ok, const char *detail)
{
    printf("  [%s] %s%s%s\n", ok ? " ok " : "FAIL", what, detail && *detail ? ": " : "", detail ? detail : "");
    return ok;
}

/* The CPU by its name, and which code the hot loops take on it: timings on two machines differ
 * by these as much as by their clocks. */
static void print_cpu(void)
{
    char model[256] = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                const char *v = strchr(line, ':') + 1;
                while (*v == ' ' || *v == '\t') v++;
                snprintf(model, sizeof model, "%.*s", (int)strcspn(v, "\n"), v);
                break;
            }
        fclose(f);
    }
    printf("\nCPU:\n  %s, %d CPUs this process may use\n", model[0] ? model : "(model not known)", la_cpu_count());
    printf("  kernels: MinHash %s, SimHash %s, lexical n-grams %s, similarity tiles %s\n", la_cpu_minhash_kernel(),
           la_cpu_simhash_kernel(), la_cpu_lexical_kernel(), la_simtile_i8_kernel_name(la_simtile_i8_kernel(1024)));
}

int la_cmd_doctor(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("Usage: leakaudit doctor\n\nPrints the build's features (CUDA, FAISS, BLAS), the devices found with their "
               "memory and compute capability, library versions, and runs self-checks. Exit 0 when every check "
               "passes, 3 otherwise. A machine without a GPU passes: audits run on the CPU.\n");
        return 0;
    }
    int ok = 1;
    printf("leakaudit %s\n\nBuild:\n", la_version());
    printf("  CUDA backend: %s\n", la_cuda_compiled() ? "compiled in" : "not compiled (no nvcc at build time)");
#ifdef LA_HAVE_FAISS
    printf("  FAISS: yes\n");
#else
    printf("  FAISS: no\n");
#endif
#if defined(LA_HAVE_BLAS) || defined(LA_HAVE_CBLAS)
    printf("  BLAS: yes\n");
#else
    printf("  BLAS: no\n");
#endif
    printf("\nLibraries:\n  libsodium %s, json-c %s, utf8proc %s, zlib %s, zstd %s, xxHash %u.%u.%u\n",
           sodium_version_string(), json_c_version(), utf8proc_version(), zlibVersion(), ZSTD_versionString(),
           XXH_versionNumber() / 10000, XXH_versionNumber() / 100 % 100, XXH_versionNumber() % 100);

    print_cpu();

    printf("\nDevices:\n");
    int count = 0;
    la_status s = la_cuda_device_count(&count);
    char no_device[512];
    snprintf(no_device, sizeof no_device, "%s", s != LA_OK ? la_last_error() : "");
    if (la_cuda_compiled()) {
        /* opened on first use by the kernels; here to say where it comes from, or why it cannot */
        char where[1024];
        if (la_cuda_blas_library(where, sizeof where) == LA_OK)
            printf("  cuBLAS: %s\n", where);
        else if (s == LA_OK)
            ok &= check("cuBLAS loads (the GPU similarity tiles and encoder need it)", 0, la_last_error());
        else
            printf("  cuBLAS: not loaded (%s)\n", la_last_error());
    }
    if (s != LA_OK) {
        printf("  none: %s; audits run on the CPU\n", no_device);
    } else {
        for (int d = 0; d < count; d++) {
            la_device_info info;
            if (la_cuda_device_info(d, &info) == LA_OK)
                printf("  %d: %s, compute %d.%d, %.1f GiB (%.1f GiB free), runtime %d, driver %d\n", d, info.name,
                       info.cc_major, info.cc_minor, (double)info.total_mem / 1073741824.0,
                       (double)info.free_mem / 1073741824.0, info.runtime_version, info.driver_version);
            else
                ok &= check("device properties", 0, la_last_error());
        }
    }

    printf("\nChecks:\n");
    ok &= check("libsodium initializes", sodium_init() >= 0, NULL);
    char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    /* composed and decomposed forms of one Vietnamese word normalize to the same bytes */
    la_status s1 = la_normalize("Vi\xe1\xbb\x87t", 6, LA_NORM_NFKC, &a, &na);
    la_status s2 = la_normalize("Vie\xcc\xa3\xcc\x82t", 8, LA_NORM_NFKC, &b, &nb);
    ok &= check("Unicode normalization (NFKC + case folding)",
                s1 == LA_OK && s2 == LA_OK && na == nb && memcmp(a, b, na) == 0, NULL);
    free(a);
    free(b);
    int32_t d = 0;
    ok &= check("calendar dates", la_date_parse("2024-02-29", 10, 0, &d) == LA_OK &&
                                      la_date_parse("2026-02-30", 10, 0, &d) != LA_OK, NULL);
    printf("\n%s\n", ok ? "All checks passed." : "Some checks failed.");
    return ok ? 0 : 3;
}
