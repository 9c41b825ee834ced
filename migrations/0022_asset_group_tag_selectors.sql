-- BloodHound's asset group tag selectors (privilege-zone rules, docs/asset-groups.md "Selectors and Cypher rules"):
-- one store for every selector of every asset group. A selector has a name, a description, an enabled state and
-- seeds, all of one type: 1 = object id, 2 = Cypher. The object-id selectors of the older asset-groups API
-- (migration 0020) become selectors with one object-id seed; that API now reads and writes these tables.

CREATE TABLE asset_group_tag_selectors (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  asset_group_id INTEGER NOT NULL,                 -- asset_groups.id (BloodHound's asset_group_tag_id)
  name           TEXT NOT NULL,
  description    TEXT NOT NULL DEFAULT '',
  created_at     TEXT NOT NULL,
  created_by     TEXT NOT NULL DEFAULT '',         -- users.id of the author ('' for rows migrated from 0020)
  updated_at     TEXT NOT NULL,
  updated_by     TEXT NOT NULL DEFAULT '',
  disabled_at    TEXT,                             -- NULL: enabled (the next analysis run applies it)
  disabled_by    TEXT,
  is_default     INTEGER NOT NULL DEFAULT 0,
  allow_disable  INTEGER NOT NULL DEFAULT 1,
  auto_certify   INTEGER NOT NULL DEFAULT 0,
  -- seeds of a selector being written, as JSON [{type, value}]: set and moved into the seeds table by the
  -- same batch (so a selector and its seeds are written by one statement list without knowing its id first)
  pending_seeds  TEXT,
  -- the last complete analysis run's evaluation of this selector (NULL until a run evaluated it)
  eval_at        TEXT,
  eval_members   INTEGER,                          -- distinct nodes it selected
  eval_error     TEXT                              -- why a Cypher rule selected nothing (parse error, budget)
);
CREATE INDEX asset_group_tag_selectors_group ON asset_group_tag_selectors (asset_group_id, name);
CREATE INDEX asset_group_tag_selectors_pending ON asset_group_tag_selectors (id) WHERE pending_seeds IS NOT NULL;

CREATE TABLE asset_group_tag_selector_seeds (
  id              INTEGER PRIMARY KEY AUTOINCREMENT, -- an object-id seed's id is its id in the older API
  selector_id     INTEGER NOT NULL,
  asset_group_id  INTEGER NOT NULL,                  -- the selector's group (the older API looks seeds up by group)
  type            INTEGER NOT NULL CHECK (type IN (1, 2)),
  value           TEXT NOT NULL                      -- the object id, or the Cypher query
);
CREATE INDEX asset_group_tag_selector_seeds_selector ON asset_group_tag_selector_seeds (selector_id);
CREATE INDEX asset_group_tag_selector_seeds_value ON asset_group_tag_selector_seeds (asset_group_id, type, value);

-- The 0020 selectors, ids kept (a selector and its one seed both take the old id).
INSERT INTO asset_group_tag_selectors (id, asset_group_id, name, created_at, updated_at)
  SELECT id, asset_group_id, name, created_at, updated_at FROM asset_group_selectors ORDER BY id;
INSERT INTO asset_group_tag_selector_seeds (id, selector_id, asset_group_id, type, value)
  SELECT id, id, asset_group_id, 1, selector FROM asset_group_selectors ORDER BY id;
DROP TABLE asset_group_selectors;
