-- Posture statistics (issue 15): one row per environment per completed analysis run, written in the run's
-- commit batch (src/findings/analysis.store.ts commitRun). Formulas: docs/findings.md "Posture".
CREATE TABLE posture_stats (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL,
  domain_sid TEXT NOT NULL,
  exposure_index REAL NOT NULL DEFAULT 0,
  tier_zero_count INTEGER NOT NULL DEFAULT 0,
  critical_risk_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE INDEX posture_stats_domain_created ON posture_stats (domain_sid, created_at, id);
CREATE INDEX posture_stats_created ON posture_stats (created_at, id);
