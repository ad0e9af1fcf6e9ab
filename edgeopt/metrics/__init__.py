"""Metrics: turn an agent's raw measurements into statistics, validity verdicts and budget checks."""
