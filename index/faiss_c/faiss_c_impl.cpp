/*
 * faiss_c_impl.cpp - the project's own implementation of the FAISS C API functions it calls.
 *
 * Debian 12's libfaiss-dev ships FAISS's c_api headers and a static libfaiss.a, but not the compiled
 * C API (libfaiss_c). cmake/faiss.cmake builds this file only when no libfaiss_c is found; where a
 * real one exists this file is not compiled at all. It implements exactly the functions that
 * index/semantic.c calls, with the prototypes of FAISS's own headers (included below, so the
 * compiler checks every signature), and nothing else.
 *
 * This is the project's only C++ and it stays behind a wall: every function catches every exception
 * and turns it into an error code (FaissErrorCode) plus a thread-local message for
 * faiss_get_last_error(). No exception crosses into C.
 */
#include <faiss/c_api/AutoTune_c.h>
#include <faiss/c_api/IndexFlat_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/impl/AuxIndexStructures_c.h>
#include <faiss/c_api/index_factory_c.h>

#include <faiss/AutoTune.h>
#include <faiss/IndexFlat.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissException.h>
#include <faiss/index_factory.h>

#include <exception>
#include <new>
#include <string>

namespace {

thread_local std::string last_error;

/* Run f, turning any exception into a FaissErrorCode and a message. */
template <typename F>
int guarded(F &&f) noexcept {
    try {
        f();
        return OK;
    } catch (const faiss::FaissException &e) {
        try { last_error = e.what(); } catch (...) {}
        return FAISS_EXCEPT;
    } catch (const std::exception &e) {
        try { last_error = e.what(); } catch (...) {}
        return STD_EXCEPT;
    } catch (...) {
        try { last_error = "unknown exception"; } catch (...) {}
        return UNKNOWN_EXCEPT;
    }
}

faiss::Index *idx(FaissIndex *p) { return reinterpret_cast<faiss::Index *>(p); }
const faiss::Index *idx(const FaissIndex *p) { return reinterpret_cast<const faiss::Index *>(p); }
faiss::RangeSearchResult *rsr(FaissRangeSearchResult *p) {
    return reinterpret_cast<faiss::RangeSearchResult *>(p);
}

} // namespace

extern "C" {

const char *faiss_get_last_error() { return last_error.c_str(); }

/* ---- Index ---- */

void faiss_Index_free(FaissIndex *obj) {
    try { delete idx(obj); } catch (...) {}
}

int faiss_Index_train(FaissIndex *index, idx_t n, const float *x) {
    return guarded([&] { idx(index)->train(n, x); });
}

int faiss_Index_add(FaissIndex *index, idx_t n, const float *x) {
    return guarded([&] { idx(index)->add(n, x); });
}

int faiss_Index_search(const FaissIndex *index, idx_t n, const float *x, idx_t k,
                       float *distances, idx_t *labels) {
    return guarded([&] { idx(index)->search(n, x, k, distances, labels); });
}

int faiss_Index_range_search(const FaissIndex *index, idx_t n, const float *x, float radius,
                             FaissRangeSearchResult *result) {
    return guarded([&] { idx(index)->range_search(n, x, radius, rsr(result)); });
}

/* ---- IndexFlatIP ---- */

int faiss_IndexFlatIP_new_with(FaissIndexFlatIP **p_index, idx_t d) {
    return guarded([&] {
        *p_index = reinterpret_cast<FaissIndexFlatIP *>(new faiss::IndexFlatIP(d));
    });
}

/* ---- index_factory ---- */

int faiss_index_factory(FaissIndex **p_index, int d, const char *description,
                        FaissMetricType metric) {
    return guarded([&] {
        *p_index = reinterpret_cast<FaissIndex *>(
            faiss::index_factory(d, description, static_cast<faiss::MetricType>(metric)));
    });
}

/* ---- RangeSearchResult ---- */

int faiss_RangeSearchResult_new(FaissRangeSearchResult **p_rsr, idx_t nq) {
    return guarded([&] {
        *p_rsr = reinterpret_cast<FaissRangeSearchResult *>(new faiss::RangeSearchResult(nq));
    });
}

void faiss_RangeSearchResult_free(FaissRangeSearchResult *obj) {
    try { delete rsr(obj); } catch (...) {}
}

void faiss_RangeSearchResult_lims(FaissRangeSearchResult *r, size_t **lims) {
    *lims = rsr(r)->lims;
}

void faiss_RangeSearchResult_labels(FaissRangeSearchResult *r, idx_t **labels,
                                    float **distances) {
    *labels = rsr(r)->labels;
    *distances = rsr(r)->distances;
}

/* ---- ParameterSpace (nprobe / efSearch of approximate indexes) ---- */

int faiss_ParameterSpace_new(FaissParameterSpace **space) {
    return guarded([&] {
        *space = reinterpret_cast<FaissParameterSpace *>(new faiss::ParameterSpace());
    });
}

void faiss_ParameterSpace_free(FaissParameterSpace *obj) {
    try { delete reinterpret_cast<faiss::ParameterSpace *>(obj); } catch (...) {}
}

int faiss_ParameterSpace_set_index_parameter(const FaissParameterSpace *space, FaissIndex *index,
                                             const char *name, double value) {
    return guarded([&] {
        reinterpret_cast<const faiss::ParameterSpace *>(space)->set_index_parameter(
            idx(index), name, value);
    });
}

} // extern "C"
