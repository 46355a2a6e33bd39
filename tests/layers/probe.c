/*
 * probe.c - one include, compiled with one layer's include path (tests/layers/CMakeLists.txt):
 * whether it compiles says whether that layer may see that header.
 */
#include LA_PROBE_HEADER

int la_layer_probe;
