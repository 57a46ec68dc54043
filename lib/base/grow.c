// SPDX-License-Identifier: LGPL-2.1
#include <stdint.h>
#include <stdlib.h>

#include "ustitch/grow.h"

void *ust_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return arr;
	ncap = *cap ? *cap * 2 : (first ? first : 1);
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return NULL;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return NULL;
	n = realloc(arr, ncap * elem);
	if (!n)
		return NULL;
	*cap = ncap;
	return n;
}
