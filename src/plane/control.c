#define _GNU_SOURCE /* accept4 */
#include "control.h"
#include "punt.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "units.h"

#define POLL_MS 50          /* also how often drained models are freed */
#define APPLY_TIMEOUT_MS 2000
/* `set ... at`: model times up to about 146 years, far from overflow. */
#define LE_TIME_AT_MAX ((le_ns_t)1 << 62)

struct client {
	int fd;                         /* -1: free slot */
	size_t len;                     /* bytes of the current line */
	int discarding;                 /* overlong line: skip to its newline */
	uint64_t last_active;           /* ctl->activity when it connected or last sent */
	char line[DP_CONTROL_LINE_MAX + 1];
};

struct dp_control {
	int listen_fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct dp_state *st;
	pthread_t thread;
	volatile int stop;
	uint64_t activity;              /* counts accepts and reads: an order, not a time */
	struct client client[DP_CONTROL_CLIENTS];
};

/* --- replies -------------------------------------------------------- */

/* A reply is written whole or the client is dropped: a client that does
 * not read its replies must not make us wait. */
static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->len = 0;
	c->discarding = 0;
}

static void send_text(struct client *c, const char *text, size_t len)
{
	while (len > 0 && c->fd >= 0) {
		ssize_t n = send(c->fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n <= 0) {
			client_close(c);
			return;
		}
		text += n;
		len -= (size_t)n;
	}
}

/* Commands write their one reply line to `out`; the caller sends it. */
static void reply_error(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_error(FILE *out, const char *fmt, ...)
{
	char msg[LE_ERR_MAX + 256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fputs("{\"ok\": false, \"error\": ", out);
	le_json_string(out, msg);
	fputs("}\n", out);
}

/* --- commands -------------------------------------------------------- */

static const char HELP[] =
	"help | show | set a2b|b2a [at +DURATION|MODELTIME] GRAMMAR | stats | reset stats   "
	"(one command per line; JSON replies)";

static int parse_dir(const char *w, enum le_direction *d)
{
	for (int i = 0; i < LE_DIRS; i++)
		if (strcmp(w, le_direction_name(i)) == 0) {
			*d = (enum le_direction)i;
			return 0;
		}
	return -1;
}

static void cmd_show(struct dp_state *st, FILE *f)
{
	fputs("{\"ok\": true", f);
	for (int d = 0; d < LE_DIRS; d++) {
		const struct dp_model *m = __atomic_load_n(&st->slot[d]->active, __ATOMIC_ACQUIRE);
		fprintf(f, ", \"%s\": ", le_direction_name(d));
		le_json_string(f, m->text);
	}
	fputs("}\n", f);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* `at TIME` after the direction: +DURATION from now, or DURATION as an
 * absolute model time (the clock of stats' time_ns). 1 when given,
 * 0 when not, -1 (replied) when malformed. *rest moves past it. */
static int parse_at(struct dp_state *st, FILE *out, const char *dir_word, char **rest, le_ns_t *at)
{
	char *w = *rest + strspn(*rest, " \t");
	size_t wl = strcspn(w, " \t");
	if (wl != 2 || strncmp(w, "at", 2) != 0)
		return 0;
	char *t = w + 2 + strspn(w + 2, " \t");
	size_t tl = strcspn(t, " \t");
	if (tl == 0) {
		reply_error(out, "set %s at: missing time (+250ms from now, or a model time like 12.5s)", dir_word);
		return -1;
	}
	char word[64], err[LE_ERR_MAX];
	snprintf(word, sizeof(word), "%.*s", (int)(tl < 63 ? tl : 63), t);
	int relative = word[0] == '+';
	le_ns_t v;
	if (tl >= sizeof(word) || le_parse_time(word + relative, LE_TIME_AT_MAX, &v, err, sizeof(err))) {
		reply_error(out, "set %s at: bad time '%s': %s", dir_word, word,
			    tl >= sizeof(word) ? "too long" : err);
		return -1;
	}
	le_ns_t now = st->now(st);
	*at = relative ? now + v : v;
	if (*at == 0)
		*at = 1; /* 0 means "at once" to the lcore; model time 0 has passed anyway */
	*rest = t + tl;
	return 1;
}

static void reply_set(FILE *f, const char *dir_word, const struct dp_model *m, const char *key,
		      uint64_t value)
{
	fprintf(f, "{\"ok\": true, \"dir\": \"%s\", \"config\": ", dir_word);
	le_json_string(f, m->text);
	fprintf(f, ", \"%s\": %" PRIu64 "}\n", key, value);
}

/* Builds the model here, hands it to the lcore and waits until the lcore
 * has switched (so that every frame received after the reply meets the
 * new link), or, with `at`, until it has staged the change, which it
 * applies exactly at that model time. */
static void cmd_set(struct dp_state *st, FILE *out, char *args)
{
	char *dir_word = args;
	while (*dir_word == ' ' || *dir_word == '\t')
		dir_word++;
	char *grammar = dir_word + strcspn(dir_word, " \t");
	if (*grammar)
		*grammar++ = '\0';
	enum le_direction d;
	if (!*dir_word) {
		reply_error(out, "set: missing direction (a2b or b2a)");
		return;
	}
	if (parse_dir(dir_word, &d)) {
		reply_error(out, "set: unknown direction '%s' (a2b or b2a)", dir_word);
		return;
	}
	le_ns_t at = 0;
	int timed = parse_at(st, out, dir_word, &grammar, &at);
	if (timed < 0)
		return;
	static struct le_path_config cfg; /* large; only this thread parses */
	char err[LE_ERR_MAX];
	if (le_path_config_parse(grammar, &cfg, err, sizeof(err))) {
		reply_error(out, "set %s: %s", dir_word, err);
		return;
	}
	/* Memory was sized for max_limit: larger queues could hold more
	 * mbufs than the pool has. */
	uint64_t frames = dp_path_frame_limit(&cfg);
	if (frames > st->max_limit) {
		reply_error(out, "set %s: limits of %" PRIu64 " frames exceed the %u the daemon reserved memory for "
			       "(restart it with --max-limit)", dir_word, frames, st->max_limit);
		return;
	}
	/* Punted classes' channels are opened at start only (punt.h). */
	if (dp_punt_accepts(st->ops->punt_ctx, d, &cfg, err, sizeof(err))) {
		reply_error(out, "set %s: %s", dir_word, err);
		return;
	}
	struct dp_model_slot *slot = st->slot[d];
	struct dp_model *m = dp_model_new(&cfg, d, st->seed, st->ops, err, sizeof(err));
	if (!m) {
		reply_error(out, "set %s: %s", dir_word, err);
		return;
	}
	uint64_t *seq = timed ? &slot->staged_seq : &slot->applied_seq;
	uint64_t seen = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
	unsigned waited = 0;
	while (dp_model_slot_publish(slot, m, at)) {
		if (waited >= APPLY_TIMEOUT_MS) {
			dp_model_free(m);
			reply_error(out, "set %s: the data plane did not take the previous change in %u ms",
				    dir_word, APPLY_TIMEOUT_MS);
			return;
		}
		dp_state_collect(st);
		sleep_ms(1);
		waited++;
	}
	/* Spin briefly (the lcore takes it within one poll), then sleep. */
	for (unsigned spins = 0; __atomic_load_n(seq, __ATOMIC_ACQUIRE) == seen; spins++) {
		if (spins > 100000) {
			sleep_ms(1);
			if (++waited >= APPLY_TIMEOUT_MS) {
				/* The lcore will still take it; say so rather than lie. */
				uint32_t held = __atomic_load_n(&slot->waiting_depth, __ATOMIC_RELAXED);
				reply_error(out, "set %s: not applied within %u ms (it will be once the earlier change "
					       "has been applied and earlier models have drained: the lcore last saw "
					       "%u frames in them, memory allows a new model at %" PRIu64 ")",
					    dir_word, APPLY_TIMEOUT_MS, held, slot->max_retiring_depth);
				return;
			}
		}
	}
	if (timed)
		reply_set(out, dir_word, m, "at_ns", at);
	else
		reply_set(out, dir_word, m, "applied_ns", __atomic_load_n(&slot->applied_ns, __ATOMIC_RELAXED));
}

static void cmd_stats(struct dp_state *st, FILE *out)
{
	struct dp_report *r = calloc(1, sizeof(*r));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = r ? open_memstream(&buf, &len) : NULL;
	if (!f) {
		free(r);
		reply_error(out, "stats: out of memory");
		return;
	}
	pthread_mutex_lock(&st->lock);
	int rc = dp_state_report(st, r, 1);
	pthread_mutex_unlock(&st->lock);
	if (rc) {
		fclose(f);
		free(buf);
		free(r);
		reply_error(out, "stats: the data plane did not answer (the daemon is stopping)");
		return;
	}
	dp_report_print_json(f, r); /* ends with a newline */
	fclose(f);
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	fputs("{\"ok\": true, \"stats\": ", out);
	fwrite(buf, 1, len, out);
	fputs("}\n", out);
	free(buf);
	free(r);
}

static void cmd_reset_stats(struct dp_state *st, FILE *out)
{
	struct dp_report *r = calloc(1, sizeof(*r));
	if (!r) {
		reply_error(out, "reset stats: out of memory");
		return;
	}
	pthread_mutex_lock(&st->lock);
	if (dp_state_report(st, r, 0)) {
		pthread_mutex_unlock(&st->lock);
		free(r);
		reply_error(out, "reset stats: the data plane did not answer (the daemon is stopping)");
		return;
	}
	free(st->baseline);
	st->baseline = r;
	pthread_mutex_unlock(&st->lock);
	fputs("{\"ok\": true}\n", out);
}

/* The first byte that makes the line not text, or -1 when it is text:
 * UTF-8 without control characters (tab aside). Non-ASCII is text: a
 * trace or .dist path may be named in any language, as on linkemud's
 * command line, and `show` (which passes UTF-8 through) must be fed back
 * to `set` unchanged. The line ends in a NUL (client_read), where a
 * sequence cut short stops. */
static long not_text_at(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x80) {
			int n = le_utf8_len((const unsigned char *)s + i);
			if (n == 0 || i + (size_t)n > len)
				return (long)i;
			i += (size_t)n;
			continue;
		}
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			return (long)i;
		i++;
	}
	return -1;
}

void dp_control_handle_line(struct dp_state *st, char *line, size_t len, FILE *out)
{
	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	/* Blanks at the end mean nothing: "reset stats " is "reset stats",
	 * as "show " is "show". */
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		line[--len] = '\0';
	long bad = not_text_at(line, len);
	if (bad >= 0) {
		/* Say which byte: the client may not see it in its own line. */
		reply_error(out, "line is not text (byte 0x%02x at byte %ld: control characters and "
			    "bytes that are not UTF-8 are refused)", (unsigned char)line[bad], bad + 1);
		return;
	}
	char *cmd = line;
	while (*cmd == ' ' || *cmd == '\t')
		cmd++;
	size_t wlen = strcspn(cmd, " \t");
	char *rest = cmd + wlen;
	char *after = rest + strspn(rest, " \t");
	if (wlen == 0) {
		reply_error(out, "empty line (try help)");
	} else if (wlen == 4 && strncmp(cmd, "help", 4) == 0 && !*after) {
		fputs("{\"ok\": true, \"help\": \"", out);
		fputs(HELP, out);
		fputs("\"}\n", out);
	} else if (wlen == 4 && strncmp(cmd, "show", 4) == 0 && !*after) {
		cmd_show(st, out);
	} else if (wlen == 3 && strncmp(cmd, "set", 3) == 0) {
		cmd_set(st, out, rest);
	} else if (wlen == 5 && strncmp(cmd, "stats", 5) == 0 && !*after) {
		cmd_stats(st, out);
	} else if (wlen == 5 && strncmp(cmd, "reset", 5) == 0 && strcmp(after, "stats") == 0) {
		cmd_reset_stats(st, out);
	} else {
		cmd[wlen] = '\0';
		reply_error(out, "unknown command '%.64s' (expected help, show, set, stats, reset stats)%s", cmd,
			    *after ? " or unexpected words after it" : "");
	}
}

/* One line's reply, built whole and then sent whole. */
static void client_handle_line(struct dp_control *ctl, struct client *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	dp_control_handle_line(ctl->st, c->line, c->len, f);
	fclose(f);
	send_text(c, buf, len);
	free(buf);
}

/* --- the thread -------------------------------------------------------- */

static void client_read(struct dp_control *ctl, struct client *c)
{
	char buf[2048];
	ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		client_close(c); /* half a line then gone: forgotten */
		return;
	}
	c->last_active = ++ctl->activity;
	for (ssize_t i = 0; i < n && c->fd >= 0; i++) {
		char ch = buf[i];
		if (ch == '\n') {
			if (!c->discarding) {
				c->line[c->len] = '\0';
				client_handle_line(ctl, c);
			}
			c->len = 0;
			c->discarding = 0;
		} else if (c->discarding) {
			continue;
		} else if (c->len == DP_CONTROL_LINE_MAX) {
			char msg[96];
			int n = snprintf(msg, sizeof(msg), "{\"ok\": false, \"error\": \"line longer than %d bytes\"}\n",
					 DP_CONTROL_LINE_MAX);
			send_text(c, msg, (size_t)n);
			c->discarding = 1;
			c->len = 0;
		} else {
			c->line[c->len++] = ch;
		}
	}
}

/* A new client always gets a slot: when all are taken, the client that has
 * been silent longest is told so and closed. Refusing the newcomer instead
 * would let clients that connect and never speak (or a half line that
 * stalls) lock every well-formed request out of the daemon. */
static struct client *free_slot(struct dp_control *ctl)
{
	struct client *oldest = &ctl->client[0];
	for (int i = 0; i < DP_CONTROL_CLIENTS; i++) {
		if (ctl->client[i].fd < 0)
			return &ctl->client[i];
		if (ctl->client[i].last_active < oldest->last_active)
			oldest = &ctl->client[i];
	}
	static const char evicted[] =
		"{\"ok\": false, \"error\": \"closed: every control slot was taken and this client was idle longest\"}\n";
	send_text(oldest, evicted, sizeof(evicted) - 1);
	client_close(oldest);
	return oldest;
}

static void accept_client(struct dp_control *ctl)
{
	int fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct client *c = free_slot(ctl);
	c->fd = fd;
	c->len = 0;
	c->discarding = 0;
	c->last_active = ++ctl->activity;
}

static void *control_main(void *arg)
{
	struct dp_control *ctl = arg;
	struct pollfd pfd[1 + DP_CONTROL_CLIENTS];
	while (!ctl->stop) {
		int n = 0, map[DP_CONTROL_CLIENTS];
		pfd[n++] = (struct pollfd){.fd = ctl->listen_fd, .events = POLLIN};
		for (int i = 0; i < DP_CONTROL_CLIENTS; i++) {
			if (ctl->client[i].fd >= 0) {
				map[n - 1] = i;
				pfd[n++] = (struct pollfd){.fd = ctl->client[i].fd, .events = POLLIN};
			}
		}
		int ready = poll(pfd, (nfds_t)n, POLL_MS);
		dp_state_collect(ctl->st);
		if (ready <= 0)
			continue;
		if (pfd[0].revents & POLLIN)
			accept_client(ctl);
		for (int k = 1; k < n; k++)
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
				client_read(ctl, &ctl->client[map[k - 1]]);
	}
	return NULL;
}

struct dp_control *dp_control_start(const char *path, struct dp_state *st, char *err, size_t errlen)
{
	struct dp_control *ctl = calloc(1, sizeof(*ctl));
	if (!ctl) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ctl->st = st;
	for (int i = 0; i < DP_CONTROL_CLIENTS; i++)
		ctl->client[i].fd = -1;
	snprintf(ctl->path, sizeof(ctl->path), "%s", path);

	/* The socket's directory: create it root-only if missing. */
	char dir[sizeof(ctl->path)];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST) {
			snprintf(err, errlen, "control socket: cannot create %s: %s", dir, strerror(errno));
			free(ctl);
			return NULL;
		}
	}
	ctl->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path); /* a stale socket from a crashed run */
	mode_t old = umask(0177); /* the socket is born 0600 */
	int rc = ctl->listen_fd < 0 ? -1 : bind(ctl->listen_fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc || listen(ctl->listen_fd, 8) || chmod(path, 0600)) {
		snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
		if (ctl->listen_fd >= 0)
			close(ctl->listen_fd);
		free(ctl);
		return NULL;
	}
	/* The data plane may place it (DPDK: off the lcores' CPUs). */
	rc = st->thread_create ? st->thread_create(&ctl->thread, "linkemu-ctl", control_main, ctl)
			       : pthread_create(&ctl->thread, NULL, control_main, ctl);
	if (rc != 0) {
		snprintf(err, errlen, "control thread: %s", strerror(rc < 0 ? -rc : rc));
		close(ctl->listen_fd);
		unlink(path);
		free(ctl);
		return NULL;
	}
	return ctl;
}

void dp_control_stop(struct dp_control *ctl)
{
	if (!ctl)
		return;
	ctl->stop = 1;
	pthread_join(ctl->thread, NULL);
	for (int i = 0; i < DP_CONTROL_CLIENTS; i++)
		client_close(&ctl->client[i]);
	close(ctl->listen_fd);
	unlink(ctl->path);
	free(ctl);
}
