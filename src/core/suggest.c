/* The nearest known word to a misspelt one (see suggest.h). Used where a
 * grammar error names an unknown word, so the message can say what was
 * probably meant: "unknown word 'lose' (did you mean 'loss'?)". */
#include "suggest.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;
	return m < c ? m : c;
}

size_t le_edit_distance(const char *a, const char *b)
{
	/* Three rows of the dynamic programme: i-2, i-1 and i (the swap of two
	 * neighbours looks two rows back). */
	size_t rows[3][LE_SUGGEST_MAX_LEN + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > LE_SUGGEST_MAX_LEN || lb > LE_SUGGEST_MAX_LEN)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		rows[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i - 2) % 3];
		int ca = tolower((unsigned char)a[i - 1]);

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			int cb = tolower((unsigned char)b[j - 1]);
			size_t cost = ca == cb ? 0 : 1;

			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < cur[j])
				cur[j] = prev2[j - 2] + 1;
		}
	}
	return rows[la % 3][lb];
}

const char *le_suggest(const char *word, const char *const *candidates, size_t ncandidates)
{
	size_t len = strlen(word), allowed = len <= 4 ? 1 : 2, best = SIZE_MAX;
	const char *pick = NULL;

	if (allowed >= len)
		allowed = len - (len > 0);
	for (size_t k = 0; k < ncandidates; k++) {
		size_t d = le_edit_distance(word, candidates[k]);

		if (d == 0)
			return NULL;
		if (d <= allowed && d < best) {
			best = d;
			pick = candidates[k];
		}
	}
	return pick;
}
