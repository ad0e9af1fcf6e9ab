"""Optional exports of results to other systems (one module per sink; each imports its library lazily)."""
