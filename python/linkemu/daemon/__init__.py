"""linkemud from Python: starting and stopping it (daemon.py), its control
socket (control.py), and what is built on that: live counters (watch.py),
capture (capture.py), timed link changes (scenario.py), and the final
counters' summary and conservation check (summary.py)."""
