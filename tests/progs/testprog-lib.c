// SPDX-License-Identifier: LGPL-2.1
/* ust-testprog-lib: main -> ust_lib_entry -> ust_lib_inner in libusttest.so. */
#include <stdlib.h>

int ust_lib_entry(int n);

int main(int argc, char **argv)
{
	int loops = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < loops; i++)
		ust_lib_entry(1);
	return 0;
}
