"""Built-in runtime descriptors, one module per agent runtime (listed in :data:`edgeopt.registry.BUILTIN_RUNTIMES`)."""
