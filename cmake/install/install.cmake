# install.cmake - what `cmake --install` (and `make install`) puts under the prefix: the program,
# the shared library (with its SONAME links) and the static one, include/leakaudit.h, a
# pkg-config file (leakaudit.pc) and a CMake package (leakauditConfig.cmake + version file).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS leakaudit leakaudit_shared leakaudit_core
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/leakaudit.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# What a static link needs besides the pkg-config modules (Requires.private): the libraries the
# build found, as linker flags for leakaudit.pc and as paths for the CMake package.
set(LA_STATIC_DEPS ${CSV_LIB})
if(LA_HAVE_CBLAS)
  list(APPEND LA_STATIC_DEPS ${LA_OPENBLAS_LIB})
endif()
if(LA_HAVE_FAISS)
  if(LA_FAISS_C_LIB)
    list(APPEND LA_STATIC_DEPS ${LA_FAISS_C_LIB})
  endif()
  list(APPEND LA_STATIC_DEPS ${LA_FAISS_LIB} stdc++)
endif()
if(OpenMP_C_FOUND)
  list(APPEND LA_STATIC_DEPS gomp)
endif()
if(LA_HAVE_CUDA)
  list(APPEND LA_STATIC_DEPS CUDA::cudart dl) # cuBLAS is opened at run time (kernels/cublas_load.cu)
endif()
list(APPEND LA_STATIC_DEPS m)
set(LA_PC_LIBS_PRIVATE "")
foreach(dep ${LA_STATIC_DEPS})
  if(dep STREQUAL "CUDA::cudart")
    string(APPEND LA_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
  elseif(IS_ABSOLUTE "${dep}")
    string(APPEND LA_PC_LIBS_PRIVATE " ${dep}")
  else()
    string(APPEND LA_PC_LIBS_PRIVATE " -l${dep}")
  endif()
endforeach()
string(APPEND LA_PC_LIBS_PRIVATE " -lpthread")
string(STRIP "${LA_PC_LIBS_PRIVATE}" LA_PC_LIBS_PRIVATE)
list(REMOVE_ITEM LA_STATIC_DEPS CUDA::cudart)

# relocatable: the prefix is found from where the .pc file lies
file(RELATIVE_PATH LA_PC_UP /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${CMAKE_CURRENT_LIST_DIR}/leakaudit.pc.in ${CMAKE_BINARY_DIR}/leakaudit.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/leakaudit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(LA_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/leakaudit)
file(RELATIVE_PATH LA_CONFIG_UP /${LA_CONFIG_DIR} /)
set(LA_SHARED_FILE libleakaudit.so.${PROJECT_VERSION})
set(LA_SHARED_SONAME libleakaudit.so.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/leakauditConfig.cmake.in ${CMAKE_BINARY_DIR}/leakauditConfig.cmake @ONLY)
# 0.x: only the same minor version is compatible
write_basic_package_version_file(${CMAKE_BINARY_DIR}/leakauditConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/leakauditConfig.cmake ${CMAKE_BINARY_DIR}/leakauditConfigVersion.cmake
        DESTINATION ${LA_CONFIG_DIR})
