-- The nodes that may be Tier Zero by what is stored on them (a superset of src/findings/tierzero.ts's rule without
-- its selector part: primary kind Domain / AZTenant, an AZRole or Tag_Tier_Zero kind, a Tier Zero RID suffix,
-- admin_tier_0 or isTierZero in the properties), kept by SQLite as nodes are written. A Cypher scan of
-- Tag_Tier_Zero nodes (src/cypher/cypher.store.ts TIER_ZERO_HINT, the same expression: keep them identical)
-- reads these few entries instead of testing every node's properties (~100 ms at 100 000 nodes).
CREATE INDEX nodes_tier_zero_hint ON nodes (id) WHERE kind IN ('Domain', 'AZTenant') OR instr(kinds, '"AZRole"') > 0 OR instr(kinds, '"Tag_Tier_Zero"') > 0
  OR substr(objectid, -4) IN ('-512', '-516', '-518', '-519', '-544')
  OR instr(properties, 'admin_tier_0') > 0 OR instr(lower(properties), 'istierzero') > 0;
