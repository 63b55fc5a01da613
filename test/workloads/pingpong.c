// SPDX-License-Identifier: MIT
/* N round trips between two processes over pipes: about 2N context
 * switches.  `pingpong N` (N <= 0: until killed). */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	int a[2], b[2];
	char c = 0;

	if (pipe(a) || pipe(b))
		return 1;
	if (fork() == 0) {
		/* Only our ends stay open: EOF when the parent exits. */
		close(a[1]);
		close(b[0]);
		while (read(a[0], &c, 1) == 1)
			if (write(b[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	for (long i = 0; n <= 0 || i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	return 0;
}
