# faiss.cmake - the FAISS C API for the semantic index (index/semantic.c).
#
# index/semantic.c includes FAISS's own c_api headers and calls faiss_* functions. Where a compiled
# libfaiss_c exists it is linked as is. Debian 12's libfaiss-dev ships the headers and a static
# libfaiss.a but no libfaiss_c: then the project builds its own implementation of exactly the C API
# functions it calls (index/faiss_c/faiss_c_impl.cpp, outside the index/*.cpp glob) over libfaiss.a.
# libfaiss.a needs BLAS + LAPACK (OpenBLAS, cmake/blas.cmake) and OpenMP at link time.
# Defines LA_HAVE_FAISS=1 on the index layer (la_index) when either is available; the in-tree glue
# is an object library added to the library's objects (LA_OBJECT_LIBS).

option(LA_WITH_FAISS "Use FAISS for the semantic index when found" ON)
set(LA_HAVE_FAISS OFF)

if(LA_WITH_FAISS)
  find_path(LA_FAISS_C_INCLUDE faiss/c_api/IndexFlat_c.h)
  find_library(LA_FAISS_C_LIB NAMES faiss_c)
  find_path(LA_FAISS_INCLUDE faiss/IndexFlat.h)
  find_library(LA_FAISS_LIB NAMES faiss)

  if(LA_FAISS_C_INCLUDE AND LA_FAISS_C_LIB)
    target_include_directories(la_index PRIVATE ${LA_FAISS_C_INCLUDE})
    target_link_libraries(la_index PUBLIC ${LA_FAISS_C_LIB})
    if(LA_FAISS_LIB)
      target_link_libraries(la_index PUBLIC ${LA_FAISS_LIB})
    endif()
    set(LA_HAVE_FAISS ON)
    message(STATUS "leakaudit: FAISS C API from ${LA_FAISS_C_LIB}")
  elseif(LA_FAISS_C_INCLUDE AND LA_FAISS_INCLUDE AND LA_FAISS_LIB AND LA_HAVE_CBLAS
         AND OpenMP_CXX_FOUND)
    add_library(la_faiss_c OBJECT ${CMAKE_CURRENT_SOURCE_DIR}/index/faiss_c/faiss_c_impl.cpp)
    target_include_directories(la_faiss_c PUBLIC ${LA_FAISS_C_INCLUDE} PRIVATE ${LA_FAISS_INCLUDE})
    set_target_properties(la_faiss_c PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_link_libraries(la_faiss_c PUBLIC ${LA_FAISS_LIB} ${LA_OPENBLAS_LIB} OpenMP::OpenMP_CXX)
    target_include_directories(la_index PRIVATE ${LA_FAISS_C_INCLUDE})
    target_link_libraries(la_index PUBLIC ${LA_FAISS_LIB} ${LA_OPENBLAS_LIB} OpenMP::OpenMP_CXX)
    list(APPEND LA_OBJECT_LIBS la_faiss_c)
    set(LA_HAVE_FAISS ON)
    message(STATUS "leakaudit: FAISS C API built in-tree over ${LA_FAISS_LIB}")
  else()
    message(STATUS "leakaudit: FAISS not found (install libfaiss-dev); semantic search uses tiles only")
  endif()
endif()

if(LA_HAVE_FAISS)
  target_compile_definitions(la_index PUBLIC LA_HAVE_FAISS=1)
endif()
