-- Asset groups (BloodHound's asset isolation groups, see docs/asset-groups.md): the "Admin Tier Zero" and
-- "Owned" system groups, groups administrators create, their selectors (object ids) and the members the
-- last complete analysis run computed.

CREATE TABLE asset_groups (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  name          TEXT NOT NULL,
  tag           TEXT NOT NULL UNIQUE,             -- the system tag members carry (admin_tier_0, owned, ...)
  system_group  INTEGER NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
INSERT INTO asset_groups (id, name, tag, system_group, created_at, updated_at) VALUES
  (1, 'Admin Tier Zero', 'admin_tier_0', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
  (2, 'Owned', 'owned', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');

-- Selectors of type object id: the next analysis run puts the named object into the group.
CREATE TABLE asset_group_selectors (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  asset_group_id   INTEGER NOT NULL,
  name             TEXT NOT NULL,
  selector         TEXT NOT NULL,                 -- the object id
  system_selector  INTEGER NOT NULL DEFAULT 0,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  UNIQUE (asset_group_id, selector)
);

-- Members as the last complete analysis run computed them; replaced in that run's commit batch.
-- custom_member = 1: the object is a member because a selector names it.
CREATE TABLE asset_group_members (
  asset_group_id  INTEGER NOT NULL,
  objectid        TEXT NOT NULL,
  custom_member   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (asset_group_id, objectid)
) WITHOUT ROWID;
CREATE INDEX asset_group_members_custom ON asset_group_members (objectid) WHERE custom_member = 1;
