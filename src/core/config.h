/* A link's configuration: the parsed form of the link grammar.
 *
 * The grammar uses netem's words (tc-netem(8)) so users' habits carry over:
 *     delay 10ms loss 0.1% limit 1000 seed 42
 * A configuration is immutable once parsed; the data plane swaps whole
 * configurations, never edits one in place.
 *
 * Words in this version:
 *   delay TIME            constant one-way delay, 0 .. LE_MAX_DELAY_NS
 *   loss [random] PERCENT Bernoulli loss, 0 .. 100 %, exact down to 1e-9
 *   limit PACKETS         frames held by the link at once (netem default 1000)
 *   seed N                seed of this link's random streams (u64)
 * Each word may appear once. An unknown word, a missing or malformed value,
 * an out-of-range number or a repeated word is an error naming the word. */
#ifndef LE_CONFIG_H
#define LE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "le_time.h"
#include "rng.h"

#define LE_MAX_DELAY_NS (3600ULL * LE_NS_PER_S)
#define LE_DEFAULT_LIMIT 1000u
#define LE_MAX_LIMIT 100000000u
#define LE_CONFIG_TEXT_MAX 1024   /* longest formatted config */
#define LE_ERR_MAX 256            /* size of error buffers throughout */

enum le_loss_model {
	LE_LOSS_NONE = 0,
	LE_LOSS_RANDOM,
};

struct le_loss_config {
	enum le_loss_model model;
	double percent;            /* as written, for formatting */
	struct le_prob p;          /* the probability used by the model */
};

struct le_link_config {
	le_ns_t delay;
	struct le_loss_config loss;
	uint32_t limit;
	int seed_set;              /* 0: the daemon supplies the seed */
	uint64_t seed;
};

void le_config_default(struct le_link_config *c);

/* Parses whitespace-separated grammar text. An empty text is a valid,
 * unimpaired link. On error returns -1, leaves *out unspecified, and writes
 * e.g. "loss: '12x%' is not a percentage" or "unknown word 'dealy'" to err. */
int le_config_parse(const char *text, struct le_link_config *out, char *err, size_t errlen);

/* Same, from words already split (argv style). */
int le_config_parse_words(int nwords, const char *const *words, struct le_link_config *out,
			  char *err, size_t errlen);

/* Writes the configuration back as grammar text that parses to the same
 * configuration (round trip). Words at their default are omitted; an
 * unimpaired link formats as "". Returns the length written (truncated
 * output is NUL-terminated; a buffer of LE_CONFIG_TEXT_MAX always fits). */
size_t le_config_format(const struct le_link_config *c, char *buf, size_t buflen);

#endif
