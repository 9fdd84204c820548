/*
 * fuzz_usage.c - libFuzzer harness for usage's reader: an audit log from memory through
 * cu_read_stream (every line judged, the records usage needs parsed by libauparse's feed,
 * cu_rec_read, cu_take) and cu_results.
 *
 * Oracles, from capdelegate(8) USAGE (a violation aborts):
 *  - a log is read whole or refused: on refusal the message names the log and a record number
 *    no larger than the log's lines, in printable ASCII;
 *  - nothing is attributed to a user without the module's record: a log without
 *    "op=capdelegate-grant" has no used and no denied runs;
 *  - every used or denied run is of a marked file and of a capability in its fI, and a used
 *    capability is in its user's recorded grants ("used" in the user's summary);
 *  - the same log read again gives the same results (no state survives between reads);
 *  - the runs counted add up: used, denied and unattributed are each at most the runs of
 *    marked files, which are at most the runs; a run outside its grant is a denied one, an
 *    ungained run a used one (of the same user, capability and file).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_usage_read.h"

#define CHECK(cond) do { if (!(cond)) fail(#cond, __LINE__); } while (0)

static void fail(const char *what, int line)
{
	fprintf(stderr, "fuzz_usage.c:%d: oracle violated: %s\n", line, what);
	abort();
}

static struct cu_mark marks[] = {
	{ "/usr/bin/ping", (cd_capmask)1 << 13 },			/* cap_net_raw */
	{ "/usr/local/bin/dmesg-delegated", (cd_capmask)1 << 34 },	/* cap_syslog */
	{ "/opt/odd dir/x", ((cd_capmask)1 << 12) | ((cd_capmask)1 << 13) },
};

/* A digest of the results, to compare two reads. */
static uint64_t digest(const struct cu_results *r)
{
	uint64_t h = 1469598103934665603ull;
	struct cu_tally **lists[] = { r->used, r->denied, r->nobody };
	size_t ns[] = { r->nused, r->ndenied, r->nnobody };
	for (size_t l = 0; l < 3; l++)
		for (size_t i = 0; i < ns[l]; i++) {
			const struct cu_tally *t = lists[l][i];
			h = (h ^ t->runs ^ (uint64_t)t->first * 3 ^ (uint64_t)t->last * 7 ^ (uint64_t)(t->cap + 1)) * 1099511628211ull;
			for (const char *c = t->file; *c; c++)
				h = (h ^ (unsigned char)*c) * 1099511628211ull;
		}
	for (size_t i = 0; i < r->nusers; i++)
		h = (h ^ r->users[i]->last_grant ^ r->users[i]->used ^ r->users[i]->sessions) * 1099511628211ull;
	return h;
}

static int read_once(const uint8_t *data, size_t size, uint64_t *sum, int *attributed)
{
	struct cu_state st;
	char *err = NULL;
	FILE *in = fmemopen((void *)data, size, "r");
	if (in == NULL || cu_state_init(&st, marks, sizeof(marks) / sizeof(marks[0]), 1000) != 0) {
		if (in != NULL)
			fclose(in);
		return -2;
	}
	int rc = cu_read_stream(&st, in, "fuzz.log", "capdelegate", &err);
	fclose(in);
	if (rc != 0) {
		size_t lines = 1;
		for (size_t i = 0; i < size; i++)
			lines += data[i] == '\n';
		if (err != NULL) {
			unsigned long long n = 0;
			CHECK(strncmp(err, "fuzz.log: record ", 17) == 0);
			CHECK(sscanf(err + 17, "%llu", &n) == 1 && n >= 1 && n <= lines);
			for (const unsigned char *c = (const unsigned char *)err; *c; c++)
				CHECK(*c >= 0x20 && *c < 0x7f);
		}
		free(err);
		cu_state_free(&st);
		return -1;
	}
	struct cu_results r;
	if (st.oom || cu_results(&st, &r) != 0) {
		cu_state_free(&st);
		return -2;
	}
	uint64_t used = 0, denied = 0, nobody = 0;
	for (size_t i = 0; i < r.nused + r.ndenied; i++) {
		const struct cu_tally *t = i < r.nused ? r.used[i] : r.denied[i - r.nused];
		const struct cu_mark *mk = NULL;
		for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++)
			if (strcmp(marks[m].path, t->file) == 0)
				mk = &marks[m];
		CHECK(mk != NULL && t->user != NULL && t->cap >= 0 && (mk->fi >> t->cap & 1));
		CHECK(t->runs > 0 && t->first <= t->last && t->first >= 1000);
		*(i < r.nused ? &used : &denied) += t->runs;
		if (i < r.nused) {
			int held = 0;
			for (size_t u = 0; u < r.nusers; u++)
				if (strcmp(r.users[u]->name, t->user) == 0)
					held = (int)(r.users[u]->used >> t->cap & 1);
			CHECK(held);
		}
	}
	for (size_t i = 0; i < r.nnobody; i++)
		nobody += r.nobody[i]->runs;
	for (size_t i = 0; i < r.noutside + r.nungained; i++) {
		const struct cu_tally *t = i < r.noutside ? r.outside[i] : r.ungained[i - r.noutside];
		struct cu_tally **of = i < r.noutside ? r.denied : r.used;
		size_t n = i < r.noutside ? r.ndenied : r.nused, k = 0;
		while (k < n && !(of[k]->cap == t->cap && strcmp(of[k]->user, t->user) == 0 &&
				  strcmp(of[k]->file, t->file) == 0))
			k++;
		CHECK(k < n && t->runs <= of[k]->runs);
	}
	CHECK(st.runs_unmarked <= st.runs);
	CHECK(used <= st.runs - st.runs_unmarked && denied <= st.runs - st.runs_unmarked);
	CHECK(nobody <= st.runs - st.runs_unmarked);
	*sum = digest(&r);
	*attributed = r.nused + r.ndenied > 0;
	cu_results_free(&r);
	cu_state_free(&st);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t a = 0, b = 0;
	int attr_a = 0, attr_b = 0;
	int ra = read_once(data, size, &a, &attr_a);
	if (ra == -2)
		return 0;
	int rb = read_once(data, size, &b, &attr_b);
	if (rb == -2)
		return 0;
	CHECK(ra == rb);
	if (ra == 0) {
		CHECK(a == b && attr_a == attr_b);
		if (memmem(data, size, "op=capdelegate-grant", 20) == NULL)
			CHECK(!attr_a);
	}
	return 0;
}
