# encoder.cmake - the CPU encoder loops (kernels/encoder.c) compile with -fno-trapping-math: no
# value changes (the code never enables floating-point traps), but it lets GCC if-convert the
# clamps in encoder_core.h's exp/erf and vectorize the GELU and softmax loops.
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/kernels/encoder.c APPEND PROPERTY COMPILE_OPTIONS -fno-trapping-math)
endif()
