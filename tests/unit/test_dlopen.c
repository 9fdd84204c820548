/*
 * test_dlopen.c - pam_capdelegate.so loads on its own (no undefined symbols) and exports the
 * PAM entry points and nothing else: the policy core must not leak into the service's
 * symbol namespace (linker version script pam_capdelegate.map).
 */
#include "config.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

static void *handle;

static int load_module(void **state)
{
	(void)state;
	const char *dir = getenv("top_builddir");
	char *path;
	if (asprintf(&path, "%s/.libs/pam_capdelegate.so", dir ? dir : ".") < 0)
		return -1;
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL)
		fprintf(stderr, "# dlopen %s: %s\n", path, dlerror());
	free(path);
	return handle ? 0 : -1;
}

static int unload_module(void **state)
{
	(void)state;
	return dlclose(handle);
}

static void test_exports_pam_entry_points(void **state)
{
	(void)state;
	const char *entry[] = { "pam_sm_authenticate", "pam_sm_setcred", "pam_sm_open_session",
				"pam_sm_close_session" };
	for (size_t i = 0; i < 4; i++)
		if (dlsym(handle, entry[i]) == NULL)
			fail_msg("%s not exported", entry[i]);
}

static void test_hides_the_core(void **state)
{
	(void)state;
	const char *hidden[] = { "cd_policy_load", "cd_resolve", "cd_apply_inheritable", "cd_log",
				 "cd_user_lookup", "cd_cap_from_name", "cd_audit_grant" };
	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		if (dlsym(handle, hidden[i]) != NULL)
			fail_msg("%s is exported", hidden[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exports_pam_entry_points),
		cmocka_unit_test(test_hides_the_core),
	};
	return cmocka_run_group_tests_name("dlopen", tests, load_module, unload_module);
}
