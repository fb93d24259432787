/* libFuzzer target: the control socket's line handler (src/plane/control.c,
 * dp_control_handle_line) with live models behind it: each input is one
 * request line, as a client sends it without its newline.
 *
 * A dp_state whose two model slots hold real models (le_path under
 * le_swap), and one fake forwarding thread for the whole run that does
 * what an lcore does between bursts: applies published models
 * (dp_model_slot_poll) and answers requests for a snapshot (ask.h). The
 * model clock stands still at NOW_NS, so nothing depends on timing.
 *
 * Every input starts from the same state (reproducible, independent of
 * the inputs before it): after each, a direction whose model a `set`
 * replaced gets a fresh initial model again, the `reset stats` baseline
 * goes and the clock goes back. A model is about 300 KiB (struct le_path),
 * so an untouched direction keeps its model rather than build a new one,
 * and the thread outlives the inputs: a fresh state and thread per input
 * ran at about 1,100 inputs/s, far from the 10^7 of a campaign.
 *
 * Oracle, beyond "no crash, no leak, no UB": the reply is exactly one line
 * of valid JSON shaped as docs/control.md says ({"ok": true, ...} or
 * {"ok": false, "error": "..."}), and a `set` that succeeded is what
 * `show` reports for its direction afterwards (a timed one once the clock
 * reaches its time). The thread always runs while a line is handled, so a
 * reply saying the data plane did not answer is a failure too. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ask.h"
#include "control.h"

#define NOW_NS 1000000000ull   /* the model's clock: 1 s */
#define MAX_LIMIT 100000u      /* frames memory is "sized" for per model */
#define FIRST_A2B "delay 1ms"
#define FIRST_B2A "rate 10mbit loss 1%"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* --- a fake forwarding thread -------------------------------------- */

/* Everything lives in this global, so what is kept across inputs stays
 * reachable for the leak check that runs after an input. */
struct fake_plane {
	struct dp_state st;
	struct dp_model_slot slot[LE_DIRS];
	struct dp_model_slot pristine[LE_DIRS]; /* each slot as slot_first left it */
	le_ns_t clock;
	volatile int stop;                 /* never set: the thread always answers */
	uint64_t snap_req, snap_done;
	struct dp_model_slot_snapshot snap[LE_DIRS];
	/* The thread polls while `serving` (an input is being handled) and
	 * sleeps on `wake` otherwise, so an idle fuzzer does not hold a CPU.
	 * It holds `run` while it touches the slots; the fuzzer takes `run`
	 * to have them to itself (the checks after a set, the reset). */
	int serving;                       /* written under wake_lock */
	pthread_mutex_t wake_lock, run;
	pthread_cond_t wake;
};

static struct fake_plane plane;
static struct le_path_config first_cfg[LE_DIRS];

/* No frame is ever offered: the models only need the ops to exist. */
static void *no_clone(void *ctx, void *h)
{
	(void)ctx, (void)h;
	return NULL;
}
static void no_free(void *ctx, void *h)
{
	(void)ctx, (void)h;
}
static uint8_t *no_bytes(void *ctx, void *h, uint32_t *len)
{
	(void)ctx, (void)h;
	*len = 0;
	return NULL;
}
static const struct le_frame_ops OPS = {.clone = no_clone, .free = no_free, .bytes = no_bytes};

static le_ns_t fake_now(const struct dp_state *st)
{
	return ((const struct fake_plane *)st->plane)->clock;
}

/* What an lcore does between two bursts, while an input is handled. A
 * round trip (publish and wait, ask and wait) costs one turn of the loop,
 * microseconds: sched_yield rather than a nap, so a second CPU polls at
 * once and a single one still lets the handler run. */
static void *fake_lcore(void *arg)
{
	struct fake_plane *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->wake_lock);
		while (!p->serving)
			pthread_cond_wait(&p->wake, &p->wake_lock);
		pthread_mutex_unlock(&p->wake_lock);
		pthread_mutex_lock(&p->run);
		while (__atomic_load_n(&p->serving, __ATOMIC_ACQUIRE)) {
			for (int d = 0; d < LE_DIRS; d++)
				dp_model_slot_poll(&p->slot[d], p->clock);
			if (dp_ask_pending(&p->snap_req, &p->snap_done)) {
				for (int d = 0; d < LE_DIRS; d++)
					dp_model_slot_snapshot(&p->slot[d], &p->snap[d]);
				dp_ask_answer(&p->snap_req, &p->snap_done);
			}
			pthread_mutex_unlock(&p->run);
			sched_yield();
			pthread_mutex_lock(&p->run);
		}
		pthread_mutex_unlock(&p->run);
	}
	return NULL;
}

/* Before a line: the thread polls. */
static void lcore_serve(struct fake_plane *p)
{
	pthread_mutex_lock(&p->wake_lock);
	__atomic_store_n(&p->serving, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->wake_lock);
}

/* After it: the thread stops touching the slots until lcore_release (it
 * may still be waking up: then it waits for `run`, which is ours). */
static void lcore_hold(struct fake_plane *p)
{
	__atomic_store_n(&p->serving, 0, __ATOMIC_RELEASE);
	while (pthread_mutex_trylock(&p->run))
		sched_yield(); /* it lets go within one turn of its loop */
}

static void lcore_release(struct fake_plane *p)
{
	pthread_mutex_unlock(&p->run);
}

static int fake_collect(struct dp_state *st, struct dp_report *r, int live)
{
	struct fake_plane *p = st->plane;
	if (!live || dp_ask_wait(&p->snap_req, &p->snap_done, &p->stop)) {
		fprintf(stderr, "fuzz_control: the fake lcore did not answer a snapshot request\n");
		abort(); /* it polls whenever a line is handled */
	}
	r->layout = "fuzz";
	r->lcores = 1;
	r->tsc_hz = r->tsc_nominal_hz = 1e9;
	r->time_ns = p->clock;
	for (int d = 0; d < LE_DIRS; d++) {
		struct dp_direction_report *x = &r->dir[d];
		memset(x, 0, sizeof(*x));
		le_hist_init(&x->error);
		dp_report_add_models(x, &p->snap[d]);
	}
	return 0;
}

/* Direction d's slot with a new initial model (the thread held). */
static void slot_first(struct fake_plane *p, int d)
{
	char err[LE_ERR_MAX];
	struct dp_model *m = dp_model_new(&first_cfg[d], (enum le_direction)d, 7, &OPS, err, sizeof(err));
	if (!m || dp_model_slot_init(&p->slot[d], m, MAX_LIMIT, err, sizeof(err))) {
		fprintf(stderr, "fuzz_control: model %d: %s\n", d, err);
		abort();
	}
	p->pristine[d] = p->slot[d];
}

/* A slot no change ever reached, as it was built: models change only
 * through the mailbox, and nothing else moves a slot whose models see no
 * frames (a poll with an empty mailbox, a snapshot, collect with nothing
 * retired write nothing). */
static int slot_untouched(const struct fake_plane *p, int d)
{
	return memcmp(&p->slot[d], &p->pristine[d], sizeof(p->slot[d])) == 0;
}

/* Back to the state every input starts from (the thread held). A slot a
 * change reached is rebuilt through the normal path: dp_model_slot_fini
 * frees the replaced, staged and retired models. */
static void plane_reset(struct fake_plane *p)
{
	for (int d = 0; d < LE_DIRS; d++)
		if (!slot_untouched(p, d)) {
			dp_model_slot_fini(&p->slot[d]);
			slot_first(p, d);
		}
	free(p->st.baseline);
	p->st.baseline = NULL;
	p->clock = NOW_NS;
}

/* Once, before the first input: the state, and the thread, asleep. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	static const char *const first[LE_DIRS] = {FIRST_A2B, FIRST_B2A};
	struct fake_plane *p = &plane;
	char err[LE_ERR_MAX];
	p->clock = NOW_NS;
	for (int d = 0; d < LE_DIRS; d++) {
		if (le_path_config_parse(first[d], &first_cfg[d], err, sizeof(err))) {
			fprintf(stderr, "fuzz_control: '%s': %s\n", first[d], err);
			abort();
		}
		slot_first(p, d);
		p->st.slot[d] = &p->slot[d];
	}
	p->st.now = fake_now;
	p->st.collect = fake_collect;
	p->st.plane = p;
	p->st.seed = 7;
	p->st.started_ns = 0;
	p->st.max_limit = MAX_LIMIT;
	p->st.ops = &OPS;
	p->st.lcores_running = 1;
	p->st.stop = &p->stop;
	pthread_mutex_init(&p->st.lock, NULL);
	pthread_mutex_init(&p->wake_lock, NULL);
	pthread_mutex_init(&p->run, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_t lcore;
	if (pthread_create(&lcore, NULL, fake_lcore, p) || pthread_detach(lcore))
		abort();
	return 0;
}

/* --- a minimal JSON checker ---------------------------------------- */

static const char *json_value(const char *s, int depth);

static const char *json_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return s;
}

/* A string at s (its opening quote); past its closing quote, or NULL. */
static const char *json_string(const char *s)
{
	if (*s++ != '"')
		return NULL;
	for (; *s != '"'; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch < 0x20)
			return NULL; /* includes the end of the text */
		if (ch == '\\') {
			s++;
			if (*s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
						return NULL;
				s += 4;
			} else if (!*s || !strchr("\"\\/bfnrt", *s)) {
				return NULL;
			}
		}
	}
	return s + 1;
}

static const char *json_number(const char *s)
{
	const char *start = s;
	if (*s == '-')
		s++;
	if (*s < '0' || *s > '9')
		return NULL;
	s += strspn(s, "0123456789");
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return NULL;
		s += strspn(s, "0123456789");
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (*s < '0' || *s > '9')
			return NULL;
		s += strspn(s, "0123456789");
	}
	return s > start ? s : NULL;
}

static const char *json_items(const char *s, char close, int object, int depth)
{
	s = json_ws(s + 1);
	if (*s == close)
		return s + 1;
	for (;;) {
		if (object) {
			s = json_string(s);
			if (!s)
				return NULL;
			s = json_ws(s);
			if (*s++ != ':')
				return NULL;
		}
		s = json_value(json_ws(s), depth + 1);
		if (!s)
			return NULL;
		s = json_ws(s);
		if (*s == close)
			return s + 1;
		if (*s++ != ',')
			return NULL;
		s = json_ws(s);
	}
}

static const char *json_value(const char *s, int depth)
{
	if (depth > 64)
		return NULL;
	switch (*s) {
	case '{':
		return json_items(s, '}', 1, depth);
	case '[':
		return json_items(s, ']', 0, depth);
	case '"':
		return json_string(s);
	case 't':
		return strncmp(s, "true", 4) ? NULL : s + 4;
	case 'f':
		return strncmp(s, "false", 5) ? NULL : s + 5;
	case 'n':
		return strncmp(s, "null", 4) ? NULL : s + 4;
	default:
		return json_number(s);
	}
}

/* The raw (still escaped) text of the string after `"key": ` in a reply;
 * its length in *len, NULL when absent. */
static const char *json_field(const char *reply, const char *key, size_t *len)
{
	char pat[32];
	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	const char *v = strstr(reply, pat);
	if (!v)
		return NULL;
	v += strlen(pat);
	const char *end = json_string(v - 1);
	if (!end)
		return NULL;
	*len = (size_t)(end - 1 - v);
	return v;
}

static void fail(const char *what, const char *line, const char *reply)
{
	fprintf(stderr, "fuzz_control: %s\n  line:  '%s'\n  reply: '%s'\n", what, line, reply);
	abort();
}

/* One reply line of valid JSON, shaped as docs/control.md says. 1: ok. */
static int check_reply(const char *line, const char *reply, size_t len)
{
	if (len == 0 || reply[len - 1] != '\n' || memchr(reply, '\n', len) != reply + len - 1)
		fail("not exactly one line", line, reply);
	if (strlen(reply) != len)
		fail("a NUL inside the reply", line, reply);
	const char *end = json_value(reply, 0);
	if (!end || *reply != '{' || *json_ws(end) != '\0')
		fail("not one JSON object", line, reply);
	if (strncmp(reply, "{\"ok\": true", 11) == 0)
		return 1;
	if (strncmp(reply, "{\"ok\": false, \"error\": \"", 24) != 0)
		fail("neither {\"ok\": true ...} nor {\"ok\": false, \"error\": ...}", line, reply);
	if (reply[24] == '"')
		fail("an empty error message", line, reply);
	return 0;
}

/* Handles one line; the reply, NUL-terminated, in *reply (to free). */
static size_t handle(struct fake_plane *p, char *line, size_t len, char **reply)
{
	size_t rlen = 0;
	*reply = NULL;
	FILE *f = open_memstream(reply, &rlen);
	if (!f)
		abort();
	dp_control_handle_line(&p->st, line, len, f);
	fclose(f);
	return rlen;
}

/* A reply of `set` saying the data plane did not take the change in time:
 * here the thread polls all along, so never right. */
static int set_not_taken(const char *reply)
{
	static const char SET_ERR[] = "{\"ok\": false, \"error\": \"set ";
	const size_t n = sizeof(SET_ERR) - 1;
	if (strncmp(reply, SET_ERR, n) != 0 || (strncmp(reply + n, "a2b: ", 5) && strncmp(reply + n, "b2a: ", 5)))
		return 0;
	const char *why = reply + n + 5;
	return strncmp(why, "not applied within", 18) == 0 || strncmp(why, "the data plane did not", 22) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The socket splits lines at '\n' and refuses longer ones. */
	if (size > DP_CONTROL_LINE_MAX || memchr(data, '\n', size))
		return -1;
	struct fake_plane *p = &plane;
	char *line = malloc(size + 1), *shown = malloc(size + 1);
	if (!line || !shown)
		abort();
	memcpy(line, data, size);
	line[size] = '\0';
	memcpy(shown, data, size); /* the handler edits line */
	shown[size] = '\0';
	for (size_t i = 0; i < size; i++)
		if (!shown[i])
			shown[i] = '?';

	lcore_serve(p);
	char *reply;
	size_t rlen = handle(p, line, size, &reply);
	lcore_hold(p); /* the slots are ours until the reset */
	int ok = check_reply(shown, reply, rlen);
	if (!ok && set_not_taken(reply))
		fail("the fake lcore did not take a change", shown, reply);

	/* A `set` that succeeded: `show` reports it once its time came. */
	static const char SET_OK[] = "{\"ok\": true, \"dir\": \"";
	size_t clen, dlen;
	const char *dir = ok && strncmp(reply, SET_OK, sizeof(SET_OK) - 1) == 0 ? json_field(reply, "dir", &dlen) : NULL;
	if (dir) {
		const char *config = json_field(reply, "config", &clen);
		if (!config || dlen != 3)
			fail("a set reply without its direction or config", shown, reply);
		const char *at = strstr(reply, "\"at_ns\": ");
		if (at) {
			/* Timed: staged; the lcore (us, now) switches at that time. */
			p->clock = strtoull(at + 9, NULL, 10);
			struct le_frame none[1];
			int d = strncmp(dir, "a2b", 3) == 0 ? LE_DIR_A2B : LE_DIR_B2A;
			(void)dp_model_slot_dequeue(&p->slot[d], p->clock, none, 1);
			dp_model_slot_poll(&p->slot[d], p->clock);
		}
		/* `show` reads the slots' active models only: no lcore needed. */
		char show[] = "show", key[4], *shown_reply;
		size_t slen = handle(p, show, 4, &shown_reply);
		if (!check_reply(show, shown_reply, slen))
			fail("show failed after a set", shown, shown_reply);
		memcpy(key, dir, 3);
		key[3] = '\0';
		size_t vlen;
		const char *v = json_field(shown_reply, key, &vlen);
		if (!v || vlen != clen || memcmp(v, config, clen) != 0) {
			fprintf(stderr, "show: '%s'\n", shown_reply);
			fail("show does not report the model the set installed", shown, reply);
		}
		free(shown_reply);
	}
	free(reply);
	plane_reset(p);
	lcore_release(p);
	free(line);
	free(shown);
	return 0;
}
