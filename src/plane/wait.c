#include "wait.h"

#include <string.h>

const char *dp_wait_mode_name(enum dp_wait_mode m)
{
	switch (m) {
	case DP_WAIT_BUSY: return "busy";
	case DP_WAIT_ADAPTIVE: return "adaptive";
	}
	return "?";
}

int dp_wait_mode_parse(const char *s, enum dp_wait_mode *out)
{
	static const enum dp_wait_mode all[] = {DP_WAIT_BUSY, DP_WAIT_ADAPTIVE};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(s, dp_wait_mode_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	}
	return -1;
}

le_ns_t dp_wait_nap(const struct dp_wait_policy *p, le_ns_t now, le_ns_t next_deadline, le_ns_t last_busy)
{
	/* Traffic just moved: more is likely within the wake-up's own cost. */
	if (now < last_busy || now - last_busy < p->idle_ns)
		return 0;
	le_ns_t nap = p->max_nap_ns;
	if (next_deadline != UINT64_MAX) {
		/* Differences only: no sum can wrap near the clock's end. */
		if (next_deadline <= now || next_deadline - now <= p->spin_ns)
			return 0;      /* within the spin window: poll until it */
		if (next_deadline - now - p->spin_ns < nap)
			nap = next_deadline - now - p->spin_ns;
	}
	return nap < DP_WAIT_MIN_NAP_NS ? 0 : nap;
}
