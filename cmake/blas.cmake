# blas.cmake - OpenBLAS (CBLAS + LAPACK) and OpenMP for the kernels layer (la_kernels) and everything above it.
#
# The semantic tile path (kernels/simtile.c) computes similarity tiles with cblas_sgemm and scans
# them on OpenMP threads; libfaiss.a (cmake/faiss.cmake) needs BLAS, LAPACK and OpenMP at link time.
# Debian's libopenblas-openmp-dev ships CBLAS and LAPACK in one library. Without it the tile path
# still builds, on a plain C fallback GEMM (much slower); LA_HAVE_CBLAS tells which.

find_package(OpenMP COMPONENTS C CXX)
if(OpenMP_C_FOUND)
  target_link_libraries(la_util PUBLIC OpenMP::OpenMP_C)
  target_compile_definitions(la_util PUBLIC LA_HAVE_OPENMP=1)
endif()

set(LA_OPENBLAS_HINT_LIB /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
set(LA_OPENBLAS_HINT_INC /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
find_library(LA_OPENBLAS_LIB NAMES openblas HINTS ${LA_OPENBLAS_HINT_LIB})
find_path(LA_CBLAS_INCLUDE cblas.h HINTS ${LA_OPENBLAS_HINT_INC}
          PATH_SUFFIXES openblas ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)

set(LA_HAVE_CBLAS OFF)
if(LA_OPENBLAS_LIB AND LA_CBLAS_INCLUDE)
  set(LA_HAVE_CBLAS ON)
  # PRIVATE include: cblas.h never reaches a public header.
  target_include_directories(la_kernels PRIVATE ${LA_CBLAS_INCLUDE})
  target_link_libraries(la_kernels PUBLIC ${LA_OPENBLAS_LIB})
  target_compile_definitions(la_kernels PUBLIC LA_HAVE_CBLAS=1)
  message(STATUS "leakaudit: OpenBLAS ${LA_OPENBLAS_LIB} (cblas.h in ${LA_CBLAS_INCLUDE})")
else()
  message(WARNING "leakaudit: OpenBLAS not found (install libopenblas-openmp-dev); "
                  "the semantic tile path uses a slow C fallback")
endif()
