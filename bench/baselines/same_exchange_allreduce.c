/* same_exchange_allreduce.c — hand-written Open MPI programs doing exactly
 * the exchanges of anyp's allreduces as bench/mpi_exchange_bench runs them,
 * in plain C/MPI-3 RMA, so that the ratio measures the engine and not the
 * algorithm (rma_ring_allreduce.c is the push ring with MPI_Barrier an
 * expert would write instead).
 *
 *   hand     step 10's ring (allreduce_hand_ring). The window holds the
 *            vector (N floats in P chunks), 2(P - 1) x P step counters and
 *            P barrier cells. Per round: stage the vector, add 1 to the
 *            right neighbour's counter {0, r}; P - 1 reduce-scatter steps
 *            (wait for counter {s, left} >= round, MPI_Get the left
 *            neighbour's chunk, add it into mine, add 1 to the right
 *            neighbour's {s + 1, r}); P - 1 all-gather steps (the same,
 *            overwriting; no notify after the last); then anyp's builtin
 *            credit barrier (design.md §11): +1 into every peer's cell {r}, wait
 *            for every cell {s} >= 1, -1 on each.
 *   ring     the builtin ring allreduce (allreduce_ring), collectives.md
 *            §3.3: a credit to the right neighbour's {0, r}; 2(P - 1)
 *            rounds of: wait {g, left} >= 1, pull segment (r - g - 1) mod P
 *            from the left neighbour and reduce (or copy) it into mine,
 *            credit {g + 1, r} to the right; then a read-done to the left's
 *            {0, left}, a wait for {0, r} >= 1, and -1 on every cell used.
 *   mesh     the builtin mesh allreduce (allreduce_mesh), collectives.md
 *            §3.2, for a vector of at most 16 KiB (one chunk): credit
 *            barrier 1 (+1 into every peer's cell {r}, wait every cell {s}
 *            >= 1); load rank 0's vector, pull and add ranks 1 .. P - 1's in
 *            rank order (the own one read locally); read-done barrier (cells
 *            >= 2); store the sum into mine; -2 on every peer cell.
 *            (ring and mesh restage the vector every round, as anyp's do
 *            not: a local copy, so that the sum can be checked.)
 * The rules are the MPI engine's: an accumulate to a peer is flushed before
 * the rank polls (so a barrier's accumulates complete together), one to
 * the own window before the rank next reads its cells; MPI_Win_sync after
 * own stores before a notify;
 * polls with MPI_Win_sync + an acquire load, MPI_Iprobe every 64 polls,
 * sched_yield when oversubscribed.
 *
 *   mpirun -n P same_exchange_allreduce N ROUNDS hand|ring|mesh
 * prints "same_exchange_allreduce P=<P> floats=<N> rounds=<R> mode=<m> us_per_round=<t>"
 * and checks the sum on every rank. N must be a multiple of P. */
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

static MPI_Win win;
static int oversubscribed;
static int* dirty; /* per peer: an accumulate not yet flushed */
static int size, me;
/* The values of accumulates not yet flushed stay put until a flush. */
static int32_t values[4096];
static int used = 0;

static void flush_dirty(void) {
  for (int p = 0; p < size; ++p) {
    if (dirty[p]) MPI_Win_flush(p, win);
    dirty[p] = 0;
  }
  used = 0;
}

static void notify(int peer, MPI_Aint at, int32_t value, int self) {
  if (used == 4096) flush_dirty();
  values[used] = value;
  MPI_Accumulate(&values[used++], 1, MPI_INT32_T, peer, at, 1, MPI_INT32_T, MPI_SUM, win);
  dirty[peer] = 1;
  (void)self;
}

static void wait_ge(volatile int32_t* cell, int32_t expected) {
  if (dirty[me]) MPI_Win_flush(me, win); /* own notifies, before reading own cells */
  dirty[me] = 0;
  MPI_Win_sync(win);
  if (__atomic_load_n(cell, __ATOMIC_ACQUIRE) >= expected) return;
  flush_dirty(); /* before blocking */
  for (long polls = 1;; ++polls) {
    MPI_Win_sync(win);
    if (__atomic_load_n(cell, __ATOMIC_ACQUIRE) >= expected) break;
    if (polls % 64 == 0) {
      int flag;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    if (oversubscribed) sched_yield();
  }
  MPI_Win_sync(win);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  me = rank;
  const int n = argc > 1 ? atoi(argv[1]) : 960;
  const int rounds = argc > 2 ? atoi(argv[2]) : 200;
  const char* mode = argc > 3 ? argv[3] : "hand";
  const int ring = strcmp(mode, "ring") == 0, mesh = strcmp(mode, "mesh") == 0;
  if (!ring && !mesh && strcmp(mode, "hand") != 0) {
    if (rank == 0) fprintf(stderr, "same_exchange_allreduce: mode must be hand, ring or mesh\n");
    MPI_Finalize();
    return 2;
  }
  if (n % size != 0) {
    if (rank == 0) fprintf(stderr, "same_exchange_allreduce: N must be a multiple of P\n");
    MPI_Finalize();
    return 2;
  }
  oversubscribed = size > sysconf(_SC_NPROCESSORS_ONLN);
  dirty = calloc((size_t)size, sizeof(int));
  const int chunk = n / size, steps = 2 * (size - 1);
  const MPI_Aint counters_at = (MPI_Aint)n * 4, bar_at = counters_at + 4 * (MPI_Aint)steps * size;
  const MPI_Aint bytes = bar_at + 4 * (MPI_Aint)size;
  char* base;
  MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  memset(base, 0, (size_t)bytes);
  float* data = (float*)base;
  volatile int32_t* counters = (volatile int32_t*)(base + counters_at);
  volatile int32_t* bar = (volatile int32_t*)(base + bar_at);
  float* x = malloc(sizeof(float) * (size_t)n);
  float* incoming = malloc(sizeof(float) * (size_t)n);
  float* acc = malloc(sizeof(float) * (size_t)n);
  for (int i = 0; i < n; ++i) x[i] = (float)(rank + 1);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
#define COUNTER(s, col) (counters_at + 4 * ((MPI_Aint)(s) * size + (col)))
  int32_t round_no = 0;
  int bad = 0;
  double times[6];
  for (int rep = 0; rep < 6; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int round = 0; round < rounds; ++round) {
      ++round_no;
      memcpy(data, x, sizeof(float) * (size_t)n);
      MPI_Win_sync(win);
      if (mesh) {
        for (int p = 0; p < size; ++p)
          if (p != rank) notify(p, bar_at + 4 * (MPI_Aint)rank, 1, rank);
        for (int p = 0; p < size; ++p)
          if (p != rank) wait_ge(bar + p, 1);
        for (int p = 0; p < size; ++p) {
          const float* part = data;
          if (p != rank) {
            MPI_Get(incoming, n, MPI_FLOAT, p, 0, n, MPI_FLOAT, win);
            MPI_Win_flush_local(p, win);
            part = incoming;
          }
          if (p == 0) {
            memcpy(acc, part, sizeof(float) * (size_t)n);
          } else {
            for (int i = 0; i < n; ++i) acc[i] += part[i];
          }
        }
        for (int p = 0; p < size; ++p)
          if (p != rank) notify(p, bar_at + 4 * (MPI_Aint)rank, 1, rank);
        for (int p = 0; p < size; ++p)
          if (p != rank) wait_ge(bar + p, 2);
        memcpy(data, acc, sizeof(float) * (size_t)n);
        for (int p = 0; p < size; ++p)
          if (p != rank) notify(rank, bar_at + 4 * (MPI_Aint)p, -2, rank);
        MPI_Win_sync(win);
        continue;
      }
      if (ring) {
        notify(right, COUNTER(0, rank), 1, rank);
        for (int g = 0; g < steps; ++g) {
          wait_ge(counters + g * size + left, 1);
          const int col = ((rank - g - 1 + 2 * size) % size) * chunk;
          MPI_Get(incoming, chunk, MPI_FLOAT, left, (MPI_Aint)col * 4, chunk, MPI_FLOAT, win);
          MPI_Win_flush_local(left, win);
          if (g < size - 1) {
            for (int i = 0; i < chunk; ++i) data[col + i] += incoming[i];
          } else {
            memcpy(data + col, incoming, sizeof(float) * (size_t)chunk);
          }
          if (g + 1 < steps) {
            MPI_Win_sync(win);
            notify(right, COUNTER(g + 1, rank), 1, rank);
          }
        }
        notify(left, COUNTER(0, left), 1, rank); /* read-done */
        wait_ge(counters + rank, 1);
        for (int g = 0; g < steps; ++g) notify(rank, COUNTER(g, left), -1, rank);
        notify(rank, COUNTER(0, rank), -1, rank);
        continue;
      }
      notify(right, COUNTER(0, rank), 1, rank);
      for (int s = 0; s < size - 1; ++s) {
        const int col = ((rank - s - 2 + 2 * size) % size) * chunk;
        wait_ge(counters + s * size + left, round_no);
        MPI_Get(incoming, chunk, MPI_FLOAT, left, (MPI_Aint)col * 4, chunk, MPI_FLOAT, win);
        MPI_Win_flush_local(left, win);
        for (int i = 0; i < chunk; ++i) data[col + i] += incoming[i];
        MPI_Win_sync(win);
        notify(right, COUNTER(s + 1, rank), 1, rank);
      }
      for (int s = 0; s < size - 1; ++s) {
        const int row = size - 1 + s, col = ((rank - s - 1 + 2 * size) % size) * chunk;
        wait_ge(counters + row * size + left, round_no);
        MPI_Get(incoming, chunk, MPI_FLOAT, left, (MPI_Aint)col * 4, chunk, MPI_FLOAT, win);
        MPI_Win_flush_local(left, win);
        memcpy(data + col, incoming, sizeof(float) * (size_t)chunk);
        if (s < size - 2) {
          MPI_Win_sync(win);
          notify(right, COUNTER(row + 1, rank), 1, rank);
        }
      }
      for (int p = 0; p < size; ++p)
        if (p != rank) notify(p, bar_at + 4 * (MPI_Aint)rank, 1, rank);
      for (int p = 0; p < size; ++p)
        if (p != rank) wait_ge(bar + p, 1);
      for (int p = 0; p < size; ++p)
        if (p != rank) notify(rank, bar_at + 4 * (MPI_Aint)p, -1, rank);
      MPI_Win_sync(win); /* the next round's stores into data follow */
    }
    times[rep] = (MPI_Wtime() - t0) / rounds * 1e6;
  }
  const float want = (float)size * (size + 1) / 2;
  for (int i = 0; i < n; ++i) bad += data[i] != want;
  MPI_Win_unlock_all(win);
  qsort(times + 1, 5, sizeof(double), cmp_double);
  if (rank == 0)
    printf("same_exchange_allreduce P=%d floats=%d rounds=%d mode=%s us_per_round=%.3f%s\n", size,
           n, rounds, mode, times[3], bad ? " WRONG" : "");
  free(x);
  free(incoming);
  free(acc);
  free(dirty);
  MPI_Win_free(&win);
  MPI_Finalize();
  return bad != 0;
}
