/*
 * edit_put.c - an "editor" for the fault cases of edit (tests/cli/edit-cases.sh): `edit_put
 * TEXT -- FILE` writes TEXT and a newline over FILE. It allocates nothing, so the fault shim
 * preloaded into capdelegate (tests/cli/fault.c, which fails the Nth allocation of the main
 * executable of every process it is loaded into) never fires in the editor, only in edit.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4 || strcmp(argv[2], "--") != 0)
		return 2;
	int fd = open(argv[3], O_WRONLY | O_TRUNC);
	if (fd < 0)
		return 1;
	size_t n = strlen(argv[1]);
	int ok = write(fd, argv[1], n) == (ssize_t)n && write(fd, "\n", 1) == 1;
	return close(fd) == 0 && ok ? 0 : 1;
}
