/* cli_hash.c - see cli_hash.h. */
#include "config.h"

#include <stdint.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli_hash.h"

static uint64_t rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

static void sipround(uint64_t v[4])
{
	v[0] += v[1]; v[1] = rotl(v[1], 13); v[1] ^= v[0]; v[0] = rotl(v[0], 32);
	v[2] += v[3]; v[3] = rotl(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = rotl(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = rotl(v[1], 17); v[1] ^= v[2]; v[2] = rotl(v[2], 32);
}

static uint64_t le64(const unsigned char *p, size_t n)
{
	uint64_t w = 0;
	for (size_t i = n; i > 0; i--)
		w = w << 8 | p[i - 1];
	return w;
}

uint64_t cli_siphash(const uint64_t key[2], const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t v[4] = { key[0] ^ 0x736f6d6570736575ULL, key[1] ^ 0x646f72616e646f6dULL,
			  key[0] ^ 0x6c7967656e657261ULL, key[1] ^ 0x7465646279746573ULL };
	size_t i;
	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t m = le64(p + i, 8);
		v[3] ^= m;
		sipround(v);
		sipround(v);
		v[0] ^= m;
	}
	uint64_t m = (uint64_t)len << 56 | le64(p + i, len - i);
	v[3] ^= m;
	sipround(v);
	sipround(v);
	v[0] ^= m;
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

void cli_hash_key(uint64_t key[2])
{
	if (getrandom(key, 2 * sizeof(*key), GRND_NONBLOCK) == (ssize_t)(2 * sizeof(*key)))
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	key[0] = (uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec;
	key[1] = (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)key;
}
