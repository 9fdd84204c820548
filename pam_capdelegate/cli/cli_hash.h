/*
 * cli_hash.h - the hash of the CLI's tables of hostile names (report's hosts and subjects,
 * usage's users): SipHash-2-4 (Aumasson and Bernstein) under a random key, so that no input
 * can be made whose names collide and make a table quadratic.
 */
#ifndef CLI_HASH_H
#define CLI_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t cli_siphash(const uint64_t key[2], const void *data, size_t len);
/* A random key (getrandom; the clock and the pid when it gives none). */
void cli_hash_key(uint64_t key[2]);

#endif
