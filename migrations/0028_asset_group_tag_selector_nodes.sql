-- Which nodes each selector picked in the last complete analysis run (BloodHound's asset_group_tag_selector_nodes;
-- GET /api/v2/asset-group-tags/{id}/selectors/{selector_id}/members, docs/asset-groups.md).
-- Replaced as a whole by the run's commit batch, next to asset_group_members, so the two always describe the same
-- run. `source` is BloodHound's AssetGroupSelectorNodeSource: 1 seed, 2 child, 3 parent. EdgeHound selects members
-- directly and does not expand them to children or parents, so every row it writes today is 1.
CREATE TABLE asset_group_tag_selector_nodes (
  selector_id  INTEGER NOT NULL,   -- asset_group_tag_selectors.id
  objectid     TEXT NOT NULL,      -- the node's object id
  source       INTEGER NOT NULL DEFAULT 1 CHECK (source IN (1, 2, 3)),
  PRIMARY KEY (selector_id, objectid)
) WITHOUT ROWID;
