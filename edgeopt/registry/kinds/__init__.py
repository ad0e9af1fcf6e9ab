"""Built-in model kinds, one descriptor per module (listed in :data:`edgeopt.registry.BUILTIN_KINDS`)."""
