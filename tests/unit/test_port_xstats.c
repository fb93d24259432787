/* The ports' drop-related xstats (port_counters.h): which names are kept,
 * `reset stats` name by name, and how the report prints them. */
#define _GNU_SOURCE /* open_memstream */
#include <stdlib.h>

#include "minitest.h"
#include "report.h"

static char *json_of(const struct dp_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	dp_report_print_json(f, r);
	fclose(f);
	return buf;
}

int main(void)
{
	/* The generic ethdev names and af_xdp's: drops kept, traffic not. */
	const char *drop[] = {"rx_missed_errors", "rx_errors", "tx_errors", "rx_mbuf_allocation_errors",
			      "rx_q0_errors", "rx_dropped", "rx_ring_full", "rx_nombuf", "tx_drop"};
	const char *other[] = {"rx_good_packets", "tx_good_bytes", "rx_q0_packets", "rx_fill_ring_empty_descs"};
	for (unsigned i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
		CHECK(dp_xstat_is_drop(drop[i]), "%s is a drop counter", drop[i]);
	for (unsigned i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		CHECK(!dp_xstat_is_drop(other[i]), "%s is not a drop counter", other[i]);

	/* Only nonzero drop counters are kept; past the limit they are counted. */
	struct dp_port_xstats s = {0};
	dp_xstats_offer(&s, "rx_good_packets", 100);
	dp_xstats_offer(&s, "rx_errors", 0);
	dp_xstats_offer(&s, "rx_missed_errors", 7);
	CHECK(s.n == 1 && strcmp(s.x[0].name, "rx_missed_errors") == 0 && s.x[0].value == 7);
	for (unsigned i = 0; i < DP_XSTATS_MAX + 3; i++) {
		char name[32];
		snprintf(name, sizeof(name), "rx_q%u_errors", i);
		dp_xstats_offer(&s, name, i + 1);
	}
	CHECK(s.n == DP_XSTATS_MAX && s.more == 4, "n %u more %u", s.n, s.more);

	/* A report: a2b's input port missed 5 then 12; b2a's output port had
	 * 3 tx_errors that did not grow after the reset. */
	struct dp_report *base = calloc(1, sizeof(*base)), *r = calloc(1, sizeof(*r));
	base->layout = r->layout = "rtc";
	dp_xstats_offer(&base->dir[LE_DIR_A2B].xstats_in, "rx_missed_errors", 5);
	dp_xstats_offer(&base->dir[LE_DIR_B2A].xstats_out, "tx_errors", 3);
	dp_xstats_offer(&r->dir[LE_DIR_A2B].xstats_in, "rx_missed_errors", 12);
	dp_xstats_offer(&r->dir[LE_DIR_A2B].xstats_in, "rx_ring_full", 2);
	dp_xstats_offer(&r->dir[LE_DIR_B2A].xstats_out, "tx_errors", 3);
	char *j = json_of(r);
	CHECK(strstr(j, "\"port_xstats\": {\"in\": {\"rx_missed_errors\": 12, \"rx_ring_full\": 2}, "
			"\"out\": {}, \"not_shown\": 0}") != NULL, "%s", j);
	CHECK(strstr(j, "\"port_xstats\": {\"in\": {}, \"out\": {\"tx_errors\": 3}, \"not_shown\": 0}") != NULL,
	      "%s", j);
	free(j);
	dp_report_subtract(r, base);
	j = json_of(r);
	CHECK(strstr(j, "\"port_xstats\": {\"in\": {\"rx_missed_errors\": 7, \"rx_ring_full\": 2}, "
			"\"out\": {}, \"not_shown\": 0}") != NULL, "%s", j);
	CHECK(strstr(j, "\"port_xstats\": {\"in\": {}, \"out\": {}, \"not_shown\": 0}") != NULL, "%s", j);
	free(j);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	dp_report_print_human(f, r);
	fclose(f);
	CHECK(strstr(buf, "    port 0 (in) driver counts:  rx_missed_errors 7  rx_ring_full 2\n") != NULL, "%s", buf);
	free(buf);
	free(base);
	free(r);
	return mt_summary();
}
