"""The measurement lab: instruments, experiments and results files.

    linkemu lab delay-precision [--quick]   one-way delay through `delay D`
    linkemu lab loss-accuracy [--quick]     loss rate, loss runs, TCP under loss
    linkemu lab noise                       the machine's own scheduling noise
    linkemu lab rate-search                 the highest loss-free probe rate

Each experiment writes one results file (results.py, schema.json) that
`linkemu report` renders. See docs/lab.md.
"""
