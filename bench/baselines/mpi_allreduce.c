/* mpi_allreduce.c — MPI_Allreduce (MPI_SUM) of N floats in place, in a loop:
 * the library's own collective, the reference for anyp's builtin mesh and
 * ring allreduces (bench/run_mpi.sh).
 *
 *   mpirun -n P mpi_allreduce N ROUNDS
 * prints "mpi_allreduce P=<P> floats=<N> rounds=<R> us_per_round=<t>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 960;
  const int rounds = argc > 2 ? atoi(argv[2]) : 200;
  float* v = calloc((size_t)n, sizeof(float)); /* zeros: the sums stay finite */
  double times[6];
  for (int rep = 0; rep < 6; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int round = 0; round < rounds; ++round)
      MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    times[rep] = (MPI_Wtime() - t0) / rounds * 1e6;
  }
  qsort(times + 1, 5, sizeof(double), cmp_double);
  if (rank == 0)
    printf("mpi_allreduce P=%d floats=%d rounds=%d us_per_round=%.3f\n", size, n, rounds,
           times[3]);
  free(v);
  MPI_Finalize();
  return 0;
}
