# cmake/build_speed.cmake — what makes a rebuild cheap, for every configuration
# (release, asan, tsan, or a build configured by hand):
#
#   ccache  every compile goes through it when it is installed (ANYP_CCACHE).
#           The cache is keyed without the checkout's folder, so a fresh clone
#           elsewhere on the same machine (how CI runs) reuses the objects the
#           working tree compiled: base_dir is the source root (absolute paths
#           under it are hashed relative), hash_dir is off (the working
#           directory is not hashed), and include-file times are not hashed.
#           The size cap ANYP_CCACHE_MAXSIZE holds the three configurations.
#   mold    the linker when it is installed and the compiler takes
#           -fuse-ld=mold (ANYP_LINKER=auto|mold|default).
#
# docs/development.md measures both.
option(ANYP_CCACHE "Compile through ccache when it is installed" ON)
set(ANYP_CCACHE_MAXSIZE "6G" CACHE STRING "ccache's size cap (holds release, asan and tsan)")
set(ANYP_LINKER "auto" CACHE STRING "auto (mold when it works) | mold | default")
set_property(CACHE ANYP_LINKER PROPERTY STRINGS auto mold default)

find_program(ANYP_CCACHE_PROGRAM ccache)
if(ANYP_CCACHE AND ANYP_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # The settings travel on each compile's command line (through env), so a
  # build driven by plain `ninja` hits the same cache as scripts/build.sh.
  # pch_defines,time_macros: what ccache needs to cache compilations that use
  # a precompiled header (the test executables').
  set(CMAKE_CXX_COMPILER_LAUNCHER
      /usr/bin/env
      "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}"
      CCACHE_NOHASHDIR=true
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      "CCACHE_MAXSIZE=${ANYP_CCACHE_MAXSIZE}"
      ${ANYP_CCACHE_PROGRAM})
  message(STATUS "anyp: compiling through ccache (${ANYP_CCACHE_PROGRAM}, cap ${ANYP_CCACHE_MAXSIZE})")
endif()

if(ANYP_LINKER STREQUAL "auto" OR ANYP_LINKER STREQUAL "mold")
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=mold" ANYP_LINKER_MOLD_WORKS)
  if(ANYP_LINKER_MOLD_WORKS)
    add_link_options(-fuse-ld=mold)
    message(STATUS "anyp: linking with mold")
  elseif(ANYP_LINKER STREQUAL "mold")
    message(FATAL_ERROR "ANYP_LINKER=mold, but the compiler cannot link with -fuse-ld=mold "
                        "(scripts/setup.sh installs mold)")
  endif()
elseif(NOT ANYP_LINKER STREQUAL "default")
  message(FATAL_ERROR "ANYP_LINKER is '${ANYP_LINKER}'; expected auto, mold or default")
endif()
