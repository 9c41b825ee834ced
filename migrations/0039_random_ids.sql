-- Random ids for graph nodes, edges and posture-stats rows (issue 24 item 3; reasoning in src/graph/ids.ts).
-- Their sequential rowids told a reader of one environment how many objects (and environments) the others
-- held. Every existing id is replaced by a random one in [2^40, 2^40 + 2^52) (NEW_ID_SQL), references
-- follow, and triggers refuse any later insert without such an id.
-- Ids seen before this migration (e.g. a saved `id(n) = …`) no longer name anything; object ids do not change.

-- 1. One new id per old one. `new` is UNIQUE: a random clash skips that row, and the next pass draws again
--    (three passes; the UPDATEs below fail, rolling the migration back, if a row were still without one).
CREATE TABLE random_id_map (tbl TEXT NOT NULL, old INTEGER NOT NULL, new INTEGER NOT NULL, PRIMARY KEY (tbl, old));
CREATE UNIQUE INDEX random_id_map_new ON random_id_map (tbl, new);

INSERT OR IGNORE INTO random_id_map (tbl, old, new) SELECT 'n', id, 1099511627776 + (random() & 4503599627370495) FROM nodes;
INSERT OR IGNORE INTO random_id_map (tbl, old, new) SELECT 'n', id, 1099511627776 + (random() & 4503599627370495) FROM nodes;
INSERT OR IGNORE INTO random_id_map (tbl, old, new) SELECT 'n', id, 1099511627776 + (random() & 4503599627370495) FROM nodes;
INSERT OR IGNORE INTO random_id_map (tbl, old, new) SELECT 'e', id, 1099511627776 + (random() & 4503599627370495) FROM edges;
INSERT OR IGNORE INTO random_id_map (tbl, old, new) SELECT 'e', id, 1099511627776 + (random() & 4503599627370495) FROM edges;
INSERT OR IGNORE INTO random_id_map (tbl, old, new) SELECT 'e', id, 1099511627776 + (random() & 4503599627370495) FROM edges;
INSERT OR IGNORE INTO random_id_map (tbl, old, new) SELECT 'p', id, 1099511627776 + (random() & 4503599627370495) FROM posture_stats;
INSERT OR IGNORE INTO random_id_map (tbl, old, new) SELECT 'p', id, 1099511627776 + (random() & 4503599627370495) FROM posture_stats;
INSERT OR IGNORE INTO random_id_map (tbl, old, new) SELECT 'p', id, 1099511627776 + (random() & 4503599627370495) FROM posture_stats;

-- 2. Renumber. Old ids are below 2^40 and new ones at or above it, so no row meets another while the UPDATE
--    runs. An edge end that names no node (none should) keeps its value.
UPDATE nodes SET id = (SELECT new FROM random_id_map WHERE tbl = 'n' AND old = nodes.id);
UPDATE edges SET
  id = (SELECT new FROM random_id_map WHERE tbl = 'e' AND old = edges.id),
  start_id = coalesce((SELECT new FROM random_id_map WHERE tbl = 'n' AND old = edges.start_id), start_id),
  end_id = coalesce((SELECT new FROM random_id_map WHERE tbl = 'n' AND old = edges.end_id), end_id);
UPDATE posture_stats SET id = (SELECT new FROM random_id_map WHERE tbl = 'p' AND old = posture_stats.id);
DROP TABLE random_id_map;

-- 3. The name index's rowids are node ids (external content, migrations/0004): rebuilt from nodes.
INSERT INTO nodes_fts (nodes_fts) VALUES ('rebuild');

-- 4. From now on an insert must bring a random id (src/graph/ids.ts NEW_ID_SQL). Without one SQLite would pick
--    max(id) + 1, which is the counter again: refused, so an insert site that forgets it fails its tests.
--    (In a BEFORE INSERT trigger an id the statement did not set reads as -1.)
CREATE TRIGGER nodes_random_id BEFORE INSERT ON nodes WHEN NEW.id IS NULL OR NEW.id < 1099511627776 OR NEW.id > 4504699138998271
BEGIN SELECT RAISE(ABORT, 'edgehound: nodes.id must be a random id (src/graph/ids.ts)'); END;
CREATE TRIGGER edges_random_id BEFORE INSERT ON edges WHEN NEW.id IS NULL OR NEW.id < 1099511627776 OR NEW.id > 4504699138998271
BEGIN SELECT RAISE(ABORT, 'edgehound: edges.id must be a random id (src/graph/ids.ts)'); END;
CREATE TRIGGER posture_stats_random_id BEFORE INSERT ON posture_stats WHEN NEW.id IS NULL OR NEW.id < 1099511627776 OR NEW.id > 4504699138998271
BEGIN SELECT RAISE(ABORT, 'edgehound: posture_stats.id must be a random id (src/graph/ids.ts)'); END;
