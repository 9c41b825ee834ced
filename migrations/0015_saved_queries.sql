-- Saved Cypher queries (BloodHound's saved_queries and saved_queries_permissions). See docs/cypher.md.

CREATE TABLE saved_queries (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id      TEXT NOT NULL,                     -- users.id of the owner
  name         TEXT NOT NULL,
  query        TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  UNIQUE (user_id, name)                          -- BloodHound: a user's query names are unique
);

-- Who else may read a query: one row per user it is shared with, or one row with public = 1.
CREATE TABLE saved_queries_permissions (
  query_id           INTEGER NOT NULL,
  shared_to_user_id  TEXT,                        -- NULL on the public row
  public             INTEGER NOT NULL DEFAULT 0,
  created_at         TEXT NOT NULL
);
CREATE UNIQUE INDEX saved_queries_permissions_unique ON saved_queries_permissions (query_id, coalesce(shared_to_user_id, ''), public);
CREATE INDEX saved_queries_permissions_user ON saved_queries_permissions (shared_to_user_id) WHERE shared_to_user_id IS NOT NULL;
