/*
 * table_check.c - the syscall table checked while xsc is built
 * (CMakeLists.txt runs it after linking): a row that leaves a policy
 * unstated or contradicts itself (table.c, xsc__table_check) stops the
 * build with one line per fault.
 */
#include <stdio.h>

#include "table.h"

int main(void)
{
	int bad = xsc__table_check(stderr);

	if (bad) {
		fprintf(stderr, "xsc table: %d fault%s (src/table.h says what each "
			"field means)\n", bad, bad == 1 ? "" : "s");
		return 1;
	}
	return 0;
}
