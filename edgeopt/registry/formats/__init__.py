"""Built-in format descriptors, one module per format (listed in :data:`edgeopt.registry.BUILTIN_FORMATS`)."""
