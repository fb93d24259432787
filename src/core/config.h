/* A link's configuration: the parsed form of the link grammar.
 *
 * The grammar uses netem's words (tc-netem(8)) so users' habits carry over:
 *     delay 10ms 2ms 25% distribution normal loss gemodel 1% 10% rate 45mbit limit 1000
 * docs/grammar.md describes every word, its units, range, netem meaning
 * and where linkemu differs. A configuration is immutable once parsed;
 * the data plane swaps whole configurations, never edits one in place.
 * It is plain data (no pointers): files named in it (distribution tables,
 * traces) are read when it is parsed, to report their errors early, and
 * read again by le_link_init, which owns what it loads.
 *
 * Each word may appear once. An unknown word, a missing or malformed
 * value, an out-of-range number, a repeated word or a contradictory
 * combination is an error naming the word; nothing is silently ignored. */
#ifndef LE_CONFIG_H
#define LE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "dist_table.h"
#include "le_time.h"
#include "rng.h"

#define LE_MAX_DELAY_NS (3600ULL * LE_NS_PER_S)
#define LE_DEFAULT_LIMIT 1000u
#define LE_MAX_LIMIT 100000000u
#define LE_MAX_LIMIT_BYTES (64ULL << 30)                 /* 64 GiB */
#define LE_MAX_RATE_BPS 100000000000000ULL               /* 100 tbit */
#define LE_FILE_MAX 256           /* longest file name in a config, with its NUL */
#define LE_CONFIG_TEXT_MAX 2048   /* longest formatted link config */
#define LE_ERR_MAX 512            /* size of error buffers throughout */
#define LE_CODEL_TARGET_NS (5 * LE_NS_PER_MS)     /* RFC 8289 defaults */
#define LE_CODEL_INTERVAL_NS (100 * LE_NS_PER_MS)

/* A netem percentage with an optional correlation (netem's crndstate). */
struct le_chance {
	double percent;        /* as written */
	struct le_prob p;
	double corr_percent;   /* as written; 0 when none */
	int corr_set;          /* a correlation was written */
	struct le_corr corr;
};

enum le_loss_model {
	LE_LOSS_NONE = 0,
	LE_LOSS_RANDOM,
	LE_LOSS_GEMODEL,
	LE_LOSS_STATE,
};

struct le_loss_config {
	enum le_loss_model model;
	double percent;            /* random: as written, for formatting */
	struct le_prob p;          /* random: the probability used by the model */
	double corr_percent;       /* random: correlation as written */
	int corr_set;
	struct le_corr corr;
	int random_word;           /* "loss random P" was written (kept on format) */
	/* gemodel: p, r, 1-h, 1-k; state: p13, p31, p32, p23, p14 (percent,
	 * netem's defaults filled in for those not written) */
	unsigned nparam;           /* how many were written */
	double param[5];
	struct le_prob prob[5];
	struct le_prob cum[2];     /* state: p13 + p14, p32 + p31 */
};

struct le_rate_config {
	uint64_t bps;              /* 0: no rate */
	int64_t packet_overhead;   /* bytes added to each frame (may be negative), netem's s32 */
	uint32_t cell_size;        /* 0: no cells */
	int64_t cell_overhead;     /* bytes added to each cell, netem's s32 */
	unsigned nparam;           /* values written after RATE (0..3) */
};

struct le_slot_config {
	int enabled;
	int use_dist;              /* slot distribution DIST DELAY JITTER */
	le_ns_t min, max;          /* slot MIN [MAX] */
	int max_set;
	enum le_dist dist;
	char dist_file[LE_FILE_MAX];
	le_ns_t dist_delay, dist_jitter;
	uint32_t packets, bytes;   /* per slot; 0 = unlimited (netem) */
};

struct le_trace_config {
	int enabled;
	int us;                    /* trace-us: microsecond timestamps */
	int once;                  /* no looping */
	char file[LE_FILE_MAX];
};

struct le_codel_config {
	int enabled;
	le_ns_t target, interval;
	int target_set, interval_set;
	int ecn;
};

struct le_link_config {
	le_ns_t delay;
	struct le_loss_config loss;
	uint32_t limit;
	int seed_set;              /* 0: the daemon supplies the seed */
	uint64_t seed;
	/* jitter */
	le_ns_t jitter;
	double jitter_corr_percent;
	int jitter_corr_set;
	struct le_corr jitter_corr;
	enum le_dist dist;
	int dist_set;
	char dist_file[LE_FILE_MAX];
	int noreorder;
	/* per-frame */
	int ecn;
	struct le_chance duplicate, corrupt, reorder;
	int duplicate_set, corrupt_set, reorder_set;
	uint32_t gap;              /* netem: 1 when reorder is set without gap */
	int gap_set;
	/* serializer and queue */
	struct le_rate_config rate;
	struct le_slot_config slot;
	struct le_trace_config trace;
	uint64_t limit_bytes;      /* 0: none */
	uint32_t limit_queue;      /* 0: none */
	int drop_head;
	int drop_set;              /* drop-head / drop-tail written */
	struct le_codel_config codel;
};

void le_config_default(struct le_link_config *c);

/* 1 when frames wait in a queue in front of a serializer (rate, trace or
 * slot). */
int le_config_has_queue(const struct le_link_config *c);
/* 1 when deadlines can decrease from one frame to the next (jitter
 * without noreorder, or reorder): the delay line must then be ordered. */
int le_config_reorders(const struct le_link_config *c);

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

/* 1 when two configurations mean the same (what a round trip keeps). */
int le_config_equal(const struct le_link_config *a, const struct le_link_config *b);

#endif
