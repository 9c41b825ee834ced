-- Issue 27: BloodHound's custom node kinds (/api/v2/custom-nodes): how a node kind is drawn, as OpenGraph
-- collectors register it (a Font Awesome icon name and a colour per kind). src/graph/customnodes.*,
-- docs/extensions.md "Custom node kinds and extension icons" (which wins when both describe a kind).
CREATE TABLE custom_node_kinds (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  kind_name   TEXT NOT NULL UNIQUE,          -- case-sensitive, as kinds are
  icon_type   TEXT NOT NULL CHECK (icon_type = 'font-awesome'),
  icon_name   TEXT NOT NULL,
  icon_color  TEXT NOT NULL,                 -- #RGB or #RRGGBB (BloodHound's default #FFFFFF when none is given)
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
