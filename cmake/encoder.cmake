# encoder.cmake - the CPU encoder loops (kernels/encoder.c) compile with -fno-trapping-math: no
# value changes (the code never enables floating-point traps), but it lets GCC if-convert the
# clamps in encoder_core.h's exp/erf and vectorize the GELU and softmax loops. -ffp-contract=off:
# no multiply-add is fused, so a vectorized loop body and its scalar remainder round every
# element the same way even where the target has FMA (a value never depends on its place).
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/kernels/encoder.c APPEND PROPERTY COMPILE_OPTIONS -fno-trapping-math
               -ffp-contract=off)
endif()
