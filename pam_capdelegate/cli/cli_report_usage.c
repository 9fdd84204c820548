/*
 * cli_report_usage.c - report over `usage --json` documents: per capability, on how many hosts
 * some user's last recorded grant holds it and on how many some run used it ("cap_net_admin
 * granted on 40 hosts, used on 3"). Only counts are kept of each document: the names are
 * capabilities, at most 64, so a table by number needs no hashing of hostile text.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_out.h"
#include "cli_report_usage.h"

/* The mask of the capability names in array @key of @entry; -1 with *@bad the first name no
 * capability has. */
static int caps_of(json_object *entry, const char *key, cd_capmask *m, const char **bad)
{
	json_object *a;
	json_object_object_get_ex(entry, key, &a);
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(a, i));
		int cap = cd_cap_from_name(name, strlen(name));
		if (cap < 0 || cap > 63) {
			*bad = name;
			return -1;
		}
		*m |= (cd_capmask)1 << cap;
	}
	return 0;
}

int cli_report_usage_judge(const struct cli_report_doc *d, cd_capmask *granted, cd_capmask *used,
			   const char **bad)
{
	json_object *g = cli_report_usage_grants(d);
	*granted = *used = 0;
	for (size_t i = 0; i < json_object_array_length(g); i++) {
		json_object *x = json_object_array_get_idx(g, i);
		cd_capmask gm = 0, um = 0;
		if (caps_of(x, "grant", &gm, bad) != 0 || caps_of(x, "used", &um, bad) != 0)
			return -1;
		*granted |= gm;
		*used |= um & gm;	/* a use is of a grant: usage writes it so */
	}
	return 0;
}

void cli_report_usage_add(struct cli_report_usage *u, cd_capmask granted, cd_capmask used)
{
	u->hosts++;
	for (int cap = 0; cap < 64; cap++) {
		u->granted[cap] += granted >> cap & 1;
		u->used[cap] += used >> cap & 1;
	}
}

void cli_report_usage_text(const struct cli_report_usage *u, enum cli_form form)
{
	static const char *const header[] = { "CAPABILITY", "granted_hosts=", "used_hosts=",
					      "unused_hosts=", NULL };
	struct cli_table t;
	char buf[16];
	cli_table_start(&t, stdout, form, "usage", header);
	cli_table_title(&t, "Each capability: on how many hosts a user's last grant holds it, on "
			    "how many a run used it");
	for (int cap = 0; cap < 64; cap++) {
		if (u->granted[cap] == 0)
			continue;
		FILE *o = cli_table_row(&t);
		fprintf(o, "%s\t%zu\t%zu\t%zu", cd_cap_label(cap, buf, sizeof(buf)), u->granted[cap],
			u->used[cap], u->granted[cap] - u->used[cap]);
		cli_table_end_row(&t);
	}
	cli_table_end(&t);
}

void cli_report_usage_json(FILE *out, const struct cli_report_usage *u)
{
	char buf[16];
	fputs("\"usage\":[", out);
	for (int cap = 0, n = 0; cap < 64; cap++) {
		if (u->granted[cap] == 0)
			continue;
		fputs(n++ ? ",{\"capability\":" : "{\"capability\":", out);
		cli_json_string(out, cd_cap_label(cap, buf, sizeof(buf)));
		fprintf(out, ",\"granted_hosts\":%zu,\"used_hosts\":%zu}", u->granted[cap], u->used[cap]);
	}
	fputc(']', out);
}
