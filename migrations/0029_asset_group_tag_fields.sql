-- BloodHound's asset group tag fields that POST/PATCH /api/v2/asset-group-tags… write (docs/asset-groups.md):
-- a description, and who created / last changed the tag (a user id; '' for the system tags and for groups made
-- before this migration). Second file of migration number 0028 (the first, selector nodes, had already landed).
ALTER TABLE asset_groups ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE asset_groups ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE asset_groups ADD COLUMN updated_by TEXT NOT NULL DEFAULT '';
