/* Whether a string is the same on every rank of MPI_COMM_WORLD: the team
 * tests check that every rank reports an error with the same message.
 * Collective. */
#ifndef WEFT_TEST_TEAM_SAME_EVERYWHERE_H
#define WEFT_TEST_TEAM_SAME_EVERYWHERE_H

#include <mpi.h>
#include <stdint.h>

/* FNV-1a, 64 bits */
static inline uint64_t string_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The minimum of the hash and of its complement over the ranks: equal
 * (one the other's complement) only if every rank's hash is the same. */
static inline int same_on_every_rank(const char *s)
{
    uint64_t h[2] = {string_hash(s), ~string_hash(s)};

    MPI_Allreduce(MPI_IN_PLACE, h, 2, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    return h[0] == ~h[1];
}

#endif
