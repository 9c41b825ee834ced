-- Cypher rules evaluated per environment (issue 24, docs/asset-groups.md "Rules and environments"). An analysis run
-- evaluates each enabled Cypher rule once per environment (over that environment's nodes only) and once over the
-- whole graph (for matches that cross environments and nodes without one). Each of these is a `scope`: an
-- environment id, or '' for the whole-graph pass. When a scope's evaluation fails (a budget, an error), the run keeps
-- that scope's last good selection, so one environment's data can never switch off a rule in another.
--
-- Rows belong to a rule's seed (asset_group_tag_selector_seeds.id, type 2): changing a rule's Cypher replaces its
-- seeds, so a changed rule never keeps the old rule's selection.
--
-- asset_group_rule_scopes: per seed and scope, the last evaluation and, while it fails, since when and why.
CREATE TABLE asset_group_rule_scopes (
  seed_id        INTEGER NOT NULL,   -- asset_group_tag_selector_seeds.id
  selector_id    INTEGER NOT NULL,   -- asset_group_tag_selectors.id (the seed's selector)
  scope          TEXT NOT NULL,      -- environment id, or '' for the whole-graph pass
  evaluated_at   TEXT NOT NULL,      -- commit time of the run that last evaluated it
  ok_at          TEXT,               -- commit time of the run whose evaluation succeeded last (its selection is kept)
  error          TEXT,               -- NULL when the last evaluation succeeded
  failing_since  TEXT,               -- commit time of the first run of the current series of failures
  members        INTEGER NOT NULL DEFAULT 0,   -- nodes the scope contributes in the last run (kept ones included)
  PRIMARY KEY (seed_id, scope)
) WITHOUT ROWID;
CREATE INDEX asset_group_rule_scopes_selector ON asset_group_rule_scopes (selector_id, scope);

-- asset_group_rule_selections: the nodes of each scope's last successful evaluation. For an environment, the nodes
-- of that environment its own pass selected; for '' the nodes only the whole-graph pass selected.
CREATE TABLE asset_group_rule_selections (
  seed_id      INTEGER NOT NULL,
  scope        TEXT NOT NULL,
  objectid     TEXT NOT NULL,
  PRIMARY KEY (seed_id, scope, objectid)
) WITHOUT ROWID;
