// loop_clones.hpp — the attributes that compile a tile loop once per x86-64
// level and let the loader pick the one for the machine (GCC's
// target_clones): ANYP_LOOP_CLONES_V3 for x86-64-v3 (AVX2, FMA) and the
// baseline; ANYP_LOOP_CLONES_V4 adds x86-64-v4 (AVX-512), for the loops
// whose work per element pays for 16 lanes (exp, log). Elsewhere (another
// compiler or CPU) they are empty. Not under TSan: the loader runs the
// clones' resolvers before TSan's runtime is up, and an instrumented
// resolver crashes the process.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define ANYP_LOOP_CLONES_V3 __attribute__((target_clones("arch=x86-64-v3", "default")))
#define ANYP_LOOP_CLONES_V4 \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ANYP_LOOP_CLONES_V3
#define ANYP_LOOP_CLONES_V4
#endif
