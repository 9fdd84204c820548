/*
 * cli_usage_read.h - usage's reader: an audit log streamed a line at a time (never held), each
 * line judged as a record (cu_head_parse), the lines usage needs parsed by libauparse and
 * handed to cu_take. Fails closed: a line that is no audit record, a last record cut short, a
 * record usage needs that lacks a field stops the read with the file and the record number.
 */
#ifndef CLI_USAGE_READ_H
#define CLI_USAGE_READ_H

#include <stdio.h>

#include "cli_usage_rec.h"

/* Read @in, named @name in messages, into @st; @key: the audit key of the runs. 0, or -1 with
 * *@err a malloc'ed message ("NAME: record N: WHY", NULL when memory ran out). */
int cu_read_stream(struct cu_state *st, FILE *in, const char *name, const char *key, char **err);

#endif
