"""What runs in the untrusted process: the sandbox harness and everything it imports of ours.

Nothing here imports the trusted side (runner, correctness, timing_trusted, sandbox, device_lock): only the
protocol (protocol: the typed messages; wire: their byte format), the records and the Django-free helpers
both sides share (backends, compare).
"""
