/* rma_ring_allreduce.c — the hand-written Open MPI baseline for a ring
 * allreduce (anyp steps 10 and 11's ring), in plain C/MPI-3 RMA: the vector
 * of N floats in P near-equal segments; P - 1 reduce-scatter steps, then
 * P - 1 allgather steps; in each step a rank MPI_Puts one segment into its
 * right neighbour's staging slot for that step, flushes, adds 1 to the
 * neighbour's step counter (MPI_Accumulate), flushes, then waits for its
 * left neighbour's segment (MPI_Win_sync + load polling, MPI_Iprobe every
 * 64 polls, sched_yield when oversubscribed) and reduces or copies it.
 * Every step has its own slot and counter, so no read-done handshake is
 * needed within one allreduce; a barrier separates repetitions.
 *
 *   mpirun -n P rma_ring_allreduce N ROUNDS
 * prints "rma_ring_allreduce P=<P> floats=<N> rounds=<R> us_per_round=<t>"
 * and checks the sum on every rank. */
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  const int oversubscribed = size > sysconf(_SC_NPROCESSORS_ONLN);
  const int seg = (n + size - 1) / size, steps = 2 * (size - 1);
  /* window: steps staging slots of seg floats, then steps counters */
  const MPI_Aint counters_at = (MPI_Aint)steps * seg * 4;
  char* base;
  MPI_Win win;
  MPI_Win_allocate(counters_at + 4 * steps + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  memset(base, 0, (size_t)(counters_at + 4 * steps + 64));
  float* v = malloc(sizeof(float) * (size_t)seg * (size_t)size);
  float* slots = (float*)base;
  volatile int32_t* counters = (volatile int32_t*)(base + counters_at);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  const int right = (rank + 1) % size;
  int32_t expected = 0;
  int bad = 0;
  double times[6];
  for (int rep = 0; rep < 6; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int round = 0; round < rounds; ++round) {
      for (int i = 0; i < seg * size; ++i) v[i] = i < n ? (float)(rank + 1) : 0.0f;
      ++expected;
      for (int s = 0; s < steps; ++s) {
        /* reduce-scatter step s sends segment (rank - s); allgather step s
         * sends segment (rank + 1 - (s - P + 1)) */
        const int send =
            s < size - 1 ? (rank - s + size) % size : (rank + 1 - (s - (size - 1)) + size) % size;
        const int recv = (send - 1 + size) % size;
        MPI_Put(v + send * seg, seg, MPI_FLOAT, right, (MPI_Aint)s * seg * 4, seg, MPI_FLOAT, win);
        MPI_Win_flush(right, win);
        const int32_t one = 1;
        MPI_Accumulate(&one, 1, MPI_INT32_T, right, counters_at + 4 * s, 1, MPI_INT32_T, MPI_SUM,
                       win);
        MPI_Win_flush(right, win);
        for (long polls = 1;; ++polls) {
          MPI_Win_sync(win);
          if (__atomic_load_n(counters + s, __ATOMIC_ACQUIRE) >= expected) break;
          if (polls % 64 == 0) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
          }
          if (oversubscribed) sched_yield();
        }
        MPI_Win_sync(win);
        const float* in = slots + (size_t)s * seg;
        for (int i = 0; i < seg; ++i)
          v[recv * seg + i] = s < size - 1 ? v[recv * seg + i] + in[i] : in[i];
      }
      /* the next round reuses the slots: everyone must have read them */
      MPI_Barrier(MPI_COMM_WORLD);
    }
    times[rep] = (MPI_Wtime() - t0) / rounds * 1e6;
  }
  const float want = (float)size * (size + 1) / 2;
  for (int i = 0; i < n; ++i) bad += v[i] != want;
  MPI_Win_unlock_all(win);
  qsort(times + 1, 5, sizeof(double), cmp_double);
  if (rank == 0)
    printf("rma_ring_allreduce P=%d floats=%d rounds=%d us_per_round=%.3f%s\n", size, n, rounds,
           times[3], bad ? " WRONG" : "");
  free(v);
  MPI_Win_free(&win);
  MPI_Finalize();
  return bad != 0;
}
