/* openmpi_choice_probe.c — which allreduce algorithm the installed Open MPI
 * runs by default, observed rather than assumed: this program defines the
 * coll/base allreduce algorithms (ompi_coll_base_allreduce_intra_*) itself,
 * exported (-rdynamic), so the coll/tuned component's calls into libmpi bind
 * to these first; each records its name and forwards to libmpi's
 * (dlsym(RTLD_NEXT)). For every size given (bytes per process, FP32 Sum)
 * rank 0 prints "P,bytes,algorithm" with Open MPI's own name of the first
 * algorithm the call entered. bench/run_decision_curves.sh compares it with
 * the transcribed rules (openmpi_tuned_rules.hpp).
 *
 *   mpirun -n P openmpi_choice_probe 8 64 4096 ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char* entered; /* the first algorithm of the current call */

typedef int (*allreduce_fn)(const void*, void*, int, void*, void*, void*, void*, uint32_t);

/* Records `name` (once per call) and runs libmpi's function of that name. */
static int forward(const char* symbol, const char* name, const void* sbuf, void* rbuf, int count,
                   void* dtype, void* op, void* comm, void* module, uint32_t segsize) {
  if (!entered) entered = name;
  allreduce_fn next = (allreduce_fn)dlsym(RTLD_NEXT, symbol);
  if (!next) {
    fprintf(stderr, "openmpi_choice_probe: libmpi has no %s\n", symbol);
    abort();
  }
  return next(sbuf, rbuf, count, dtype, op, comm, module, segsize);
}

#define PROBE(suffix, name)                                                                       \
  int ompi_coll_base_allreduce_intra_##suffix(const void* sbuf, void* rbuf, int count,            \
                                              void* dtype, void* op, void* comm, void* module,    \
                                              uint32_t segsize) {                                 \
    return forward("ompi_coll_base_allreduce_intra_" #suffix, name, sbuf, rbuf, count, dtype, op, \
                   comm, module, segsize);                                                        \
  }

PROBE(basic_linear, "basic_linear")
PROBE(nonoverlapping, "nonoverlapping")
PROBE(recursivedoubling, "recursive_doubling")
PROBE(ring, "ring")
PROBE(ring_segmented, "segmented_ring")
PROBE(redscat_allgather, "rabenseifner")

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    const long bytes = atol(argv[i]);
    const int count = (int)(bytes / 4);
    float* in = calloc((size_t)count + 1, sizeof(float));
    float* out = calloc((size_t)count + 1, sizeof(float));
    entered = NULL;
    MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d,%ld,%s\n", size, bytes, entered ? entered : "none");
    free(in);
    free(out);
  }
  MPI_Finalize();
  return 0;
}
