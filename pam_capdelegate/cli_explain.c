#include "config.h"
#include "cli_common.h"
int cli_explain_main(int argc, char **argv) { (void)argc; (void)argv; return 2; }
