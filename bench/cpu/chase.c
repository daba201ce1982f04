// The memory-bound foreground of bench/cpu: a pointer chase over a large array, so that every step waits for
// one load from memory (a random cycle defeats the caches and the prefetcher). Prints the steps per second it
// made, which is what memory contention slows down.
//
// Usage: chase MIB SECONDS
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: chase MIB SECONDS\n");
        return 2;
    }
    const size_t n = (size_t)atol(argv[1]) * 1024 * 1024 / sizeof(size_t);
    const double seconds = atof(argv[2]);
    size_t* next = malloc(n * sizeof(size_t));
    if (n < 2 || next == NULL || seconds <= 0) {
        fprintf(stderr, "chase: need at least 1 MiB, memory for it and a positive time\n");
        return 2;
    }
    // Sattolo's algorithm: one cycle through every element, in random order.
    for (size_t i = 0; i < n; ++i) {
        next[i] = i;
    }
    uint64_t seed = 0x9e3779b97f4a7c15u;
    for (size_t i = n - 1; i > 0; --i) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        const size_t j = (size_t)(seed % i);
        const size_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    size_t at = 0;
    uint64_t steps = 0;
    const double start = now();
    double elapsed = 0;
    do {
        for (int k = 0; k < 100000; ++k) {
            at = next[at];
        }
        steps += 100000;
        elapsed = now() - start;
    } while (elapsed < seconds);
    // `at` is printed so that the loop cannot be optimised away.
    printf("%.0f steps/s (end %zu)\n", (double)steps / elapsed, at);
    free(next);
    return 0;
}
