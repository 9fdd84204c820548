#include "config.h"
#include "cli_common.h"
int cli_check_main(int argc, char **argv) { (void)argc; (void)argv; return 2; }
