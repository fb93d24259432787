#!/usr/bin/env python3
"""Mutation testing of the live-change code (swap.h, link_change.c's carry
functions, queue adoption, class matching): each mutant is a realistic
one-line bug; it is caught when a unit test fails.

    tests/unit/mutate_swap.py [--without-swap-test] [N ...]

Works on a copy of the tree in a temporary folder (the worktree is never
touched), built with meson there. Prints one line per mutant and the
ratio caught. --without-swap-test leaves test_swap out, to see what the
other suites catch alone."""
import os, shutil, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (Left out as equivalent: `while` -> `if` where the queue moves its front
# past an emptied ring: adoption never leaves an empty ring between two
# that hold frames.)
M = [
 ("src/core/link_change.c", "\t\tle_chance_carry(&n->dup, &o->dup, &nc->duplicate, &oc->duplicate);\n", "", "duplicate stream not carried"),
 ("src/core/link_change.c", "\t\tle_chance_carry(&n->corrupt, &o->corrupt, &nc->corrupt, &oc->corrupt);\n", "", "corrupt stream not carried"),
 ("src/core/link_change.c", "\t\tle_chance_carry(&n->reorder, &o->reorder, &nc->reorder, &oc->reorder);\n", "", "reorder stream not carried"),
 ("src/core/link_change.c", "\t\tle_jitter_carry(&n->jitter, &o->jitter);\n", "", "jitter stream not carried"),
 ("src/core/link_change.c", "\tn->born = o->born; /* its counts go on: the same link for the books */\n", "", "class identity not carried"),
 ("src/core/loss.c", "const int same_model = nc->model == oc->model;", "const int same_model = 1;", "loss chain carried across models"),
 ("src/core/link_change.c", "le_loss_carry(&n->loss, &o->loss, streams,", "le_loss_carry(&n->loss, &o->loss, 0,", "loss stream not carried"),
 ("src/core/loss.c", "const int same_model = nc->model == oc->model;", "const int same_model = 0;", "loss chain not carried"),
 ("src/core/perframe.c", "\tif (!le_prob_same(nc->p, oc->p))\n", "\tif (1)\n", "chance gap redrawn when p is kept"),
 ("src/core/perframe.c", "\tif (!le_prob_same(nc->p, oc->p))\n", "\tif (0)\n", "chance gap kept when p changes"),
 ("src/core/loss.c", "if (same_model && le_prob_same(nc->p, oc->p))", "if (0)", "loss gap redrawn when p is kept"),
 ("src/core/loss.c", "if (same_model && le_prob_same(nc->p, oc->p))", "if (same_model)", "loss gap kept when p changes"),
 ("src/core/loss.c", "\t\t\tif (le_prob_same(nc->prob[i], oc->prob[i]))\n", "\t\t\tif (0)\n", "gemodel gaps redrawn when kept"),
 ("src/core/link_change.c", "streams, nc->slot.enabled && oc->slot.enabled);", "streams, 0);", "slot phase not carried"),
 ("src/core/link_change.c", "le_slot_carry(&n->slot, &o->slot, streams,", "le_slot_carry(&n->slot, &o->slot, 0,", "slot stream not carried"),
 ("src/core/link_change.c", "nc->codel.enabled && oc->codel.enabled);", "0);", "codel state not carried"),
 ("src/core/link_change.c", "\tn->reorder_counter = o->reorder_counter;\n", "", "reorder counter not carried"),
 ("src/core/link_change.c", "\tn->last_deadline = max_ns(n->last_deadline, o->last_deadline);\n", "", "noreorder last deadline not carried"),
 ("src/core/link_change.c", "\tn->busy = o->busy;\n", "", "rate busy time not carried"),
 ("src/core/link_change.c", "\tn->floor = n->clock; /* n's serializer starts nothing before the change */\n", "", "no floor at the change"),
 ("src/core/link_change.c", "\tle_link_settle(o, o->clock);\n\tn->clock", "\tn->clock", "old not brought to T"),
 ("src/core/link_change.c", "\tif (at > o->clock)\n\t\to->clock = at;\n", "", "change time ignored"),
 ("src/core/link_change.c", "\t\tn->tleft = o->tleft;\n", "", "trace transit bytes not carried"),
 ("src/core/link_change.c", "le_trace_same(&n->trace, &o->trace) && nc->trace.once == oc->trace.once);", "0);", "trace position mapped, not copied"),
 ("src/core/link_change.c", "\tn->ctr = o->ctr;\n", "", "counters not carried"),
 ("src/core/link_change.c", "\tmemset(&o->ctr, 0, sizeof(o->ctr));\n\tcarry", "\tcarry", "old counters not reset (double count)"),
 ("src/core/link_change.c", "\tn->elder = o;\n", "", "no elder link (limit ignores old frames)"),
 ("src/core/link_change.c", "int streams = !nc->seed_set || n->seed == o->seed;", "int streams = 1;", "explicit seed ignored"),
 ("src/core/link_change.c", "\t\tn->seed = o->seed;\n", "", "effective seed not carried"),
 ("src/core/link_stages.c", "deliver(l, &f, max_ns(f.arrival, l->floor));", "deliver(l, &f, f.arrival);", "carried frames sent before the change"),
 ("src/core/link_change.c", "\t\tle_trace_skip_after(&n->trace, &n->tpos, nc->trace.once, n->clock);\n\t}\n}", "\t}\n}", "new trace not started at T"),
 ("src/core/link_stages.c", "\tfor (struct le_link *e = l->elder; e != NULL; e = e->elder) {", "\tfor (struct le_link *e = NULL; e != NULL; e = e->elder) {", "limit ignores elder frames"),
 ("src/core/link_change.c", "\t\tle_counters_add(&o->heir->ctr, &o->ctr);\n", "", "detach loses counts"),
 ("src/core/queue.c", "\tq->bytes = old->bytes;\n", "", "adopted queue bytes lost"),
 ("src/core/queue.c", "\tq->front = 0;\n", "\tq->front = n - 1;\n", "adopted queue front wrong"),
 ("src/core/swap.c", "apply(s, s->staged_at ? s->staged_at : s->clock);", "apply(s, s->clock);", "change at poll time, not T"),
 ("src/core/swap.c", "s->staged_at <= s->clock)", "s->staged_at < s->clock)", "change one ns late"),
 ("src/core/swap.c", "\t\t\tif (d < best_d) {", "\t\t\tif (d <= best_d) {", "newer path first on ties"),
 ("src/core/swap.c", "\t\tif (le_path_depth(p) == 0) {", "\t\tif (le_path_depth(p) <= 1) {", "retiring path handed back too early"),
 ("src/core/path.c", "int j = le_path_class_index(old, le_path_class_name(newp, k));", "int j = k < old->nlinks ? (int)k : -1;", "classes by position"),
 ("src/core/trace.c", "\t\tif (!strict && rel % t->period == 0)\n\t\t\tlaps--;\n", "", "skip_to off by a lap"),
 ("src/core/trace.c", "\tif (same) {\n\t\t*np = *op;\n\t\treturn;\n\t}\n", "", "same-trace position not copied"),
 ("src/core/slot.c", "\t\tn->packets_left = o->packets_left;\n", "", "slot packet budget not carried"),
 ("src/core/slot.c", "\t\tn->bytes_left = o->bytes_left;\n", "", "slot byte budget not carried"),
 ("src/core/codel.c", "\telse if (o->maxpacket > n->maxpacket)", "\telse if (0)", "codel maxpacket not carried"),
 ("src/core/jitter.c", "\tn->last = o->last;\n\tn->primed", "\tn->primed", "jitter correlation memory lost"),
 ("src/core/loss.c", "\t\tn->last = o->last;\n", "", "loss correlation memory lost"),
]

def main():
    args = sys.argv[1:]
    without = "--without-swap-test" in args
    only = [a for a in args if a.isdigit()]
    tests = [["tests/unit/test_path"], ["tests/unit/test_link"], ["tests/unit/test_trace", os.path.join(ROOT, "traces")]]
    if not without:
        tests.insert(0, ["tests/unit/test_swap", os.path.join(ROOT, "traces")])
    targets = [t[0] for t in tests]
    with tempfile.TemporaryDirectory(prefix="le_mutate_") as tmp:
        for d in ("meson.build", "meson_options.txt", "src", "tests", "bench", "profiles"):
            p = os.path.join(ROOT, d)
            (shutil.copytree if os.path.isdir(p) else shutil.copy)(p, os.path.join(tmp, d))
        build = os.path.join(tmp, "build")
        subprocess.run(["meson", "setup", build], cwd=tmp, check=True, capture_output=True)
        caught = total = 0
        missed = []
        for i, (f, a, b, why) in enumerate(M):
            if only and str(i) not in only:
                continue
            path = os.path.join(tmp, f)
            src = open(path).read()
            if src.count(a) != 1:
                print(f"#{i} SKIP (the line is not there once: {src.count(a)}): {why}")
                continue
            open(path, "w").write(src.replace(a, b))
            try:
                if subprocess.run(["ninja", "-C", build] + targets, capture_output=True).returncode != 0:
                    print(f"#{i} NOBUILD: {why}")
                    continue
                total += 1
                fail = [t[0].split("/")[-1] for t in tests
                        if subprocess.run([os.path.join(build, t[0])] + t[1:], capture_output=True).returncode != 0]
                if fail:
                    caught += 1
                    print(f"#{i} caught by {','.join(fail)}: {why}", flush=True)
                else:
                    missed.append(why)
                    print(f"#{i} MISSED: {why}", flush=True)
            finally:
                open(path, "w").write(src)
        print(f"caught {caught}/{total}; missed: {missed}")
        return 0 if caught == total else 1


if __name__ == "__main__":
    sys.exit(main())
