/* "Did you mean ...?": the known word nearest to a misspelt one.
 *
 * Distance is the optimal-string-alignment edit distance (insert, delete,
 * substitute, or swap two neighbours: one edit each), case-insensitive.
 * A word is suggested only when it is close enough to be a plausible typo:
 * at most 1 edit for words of up to 4 letters, at most 2 for longer ones,
 * and fewer edits than the typed word has letters. Ties go to the first
 * candidate in the list, so callers list their words in a sensible order. */
#ifndef LE_SUGGEST_H
#define LE_SUGGEST_H

#include <stddef.h>

/* Edit distance between a and b (case-insensitive), or SIZE_MAX when
 * either is longer than LE_SUGGEST_MAX_LEN (nobody misspells that much). */
#define LE_SUGGEST_MAX_LEN 32
size_t le_edit_distance(const char *a, const char *b);

/* The candidate nearest to word, or NULL when none is close enough (see
 * above) or word is itself one of them. */
const char *le_suggest(const char *word, const char *const *candidates, size_t ncandidates);

#endif
