"""The ``edgeopt`` command line: each command parses flags, calls the Python API, and renders."""
