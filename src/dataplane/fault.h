/* Test-only fault injection for start-up failures that no real condition
 * can provoke on demand. LINKEMUD_TEST_FAULT is a comma-separated list:
 *
 *   tsc         TSC calibration fails (needs a TSC that drifts > 5 %)
 *   link        building the a2b link fails after the check (as when a
 *               trace file vanishes between the check and the start)
 *   port-start  starting port 1 fails (after port 0 started)
 *
 * Failures with real triggers are tested with those instead: too few
 * lcores for a layout, too little hugepage memory for the mbuf pool, an
 * unusable control socket path. See docs/control.md. */
#ifndef DP_FAULT_H
#define DP_FAULT_H

/* 1 when `name` is in LINKEMUD_TEST_FAULT. */
int dp_test_fault(const char *name);

#endif
