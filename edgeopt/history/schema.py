"""The history file's SQLite schema: the ``runs`` table (one row per run, with the summary columns ``history``
lists), ``baselines``, ``meta`` (the schema version) and the cells tables of :mod:`.cells_rows`.

Version 2 added ``run_cells``/``run_metrics`` and ``model_kind``; a version-1 file is migrated on open
(:mod:`.migrate`)."""

from __future__ import annotations

from .cells_rows import CELLS_DDL

SCHEMA_VERSION = 2

DDL = (
    """CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        created_at TEXT NOT NULL,
        started_at TEXT,
        model_name TEXT NOT NULL,
        model_path TEXT NOT NULL,
        model_sha256 TEXT NOT NULL,
        model_size_bytes INTEGER NOT NULL,
        target TEXT NOT NULL,
        device TEXT NOT NULL,
        runner TEXT NOT NULL,
        runtime TEXT NOT NULL,
        runtime_version TEXT NOT NULL,
        edgeopt_version TEXT NOT NULL,
        valid INTEGER NOT NULL,
        verdict TEXT,
        latency_ms_p50 REAL NOT NULL,
        latency_ms_p99 REAL NOT NULL,
        latency_ms_mean REAL NOT NULL,
        throughput_ips REAL NOT NULL,
        memory_mb_peak REAL,
        energy_mj REAL,
        energy_source TEXT,
        samples_count INTEGER NOT NULL,
        samples_format TEXT,
        samples BLOB,
        group_id TEXT,
        label TEXT,
        seed INTEGER NOT NULL,
        settings_json TEXT NOT NULL,
        environment_json TEXT NOT NULL,
        versions_json TEXT NOT NULL,
        result_json TEXT NOT NULL,
        model_kind TEXT
    )""",
    """CREATE INDEX IF NOT EXISTS runs_model ON runs (model_name, model_sha256)""",
    """CREATE INDEX IF NOT EXISTS runs_target ON runs (target, device)""",
    """CREATE TABLE IF NOT EXISTS baselines (
        name TEXT NOT NULL,
        device TEXT NOT NULL,
        run_id INTEGER NOT NULL REFERENCES runs (id),
        created_at TEXT NOT NULL,
        PRIMARY KEY (name, device)
    )""",
    *CELLS_DDL,
)
