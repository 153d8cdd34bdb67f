"""The build: its plan and fingerprints, one function per step, the backends at their places."""
