-- Issue 28: relationship conditions `r.isacl` / `r.isacl = true` (the Query Library's ACL questions, e.g. "ACEs
-- across trusts") read from partial indexes of the ACL relationships instead of each candidate relationship's row
-- (src/cypher/cypher.store.ts relConditionSql, ACL_KEY; docs/cypher.md "How it runs"). The rows of a node's
-- relationships lie on scattered pages (relationship ids are random): reading each one to test `isacl` was ~70 % of
-- "ACEs across trusts" near 1 M relationships. The condition the store writes is this index's WHERE, word for word:
-- `json_type(e.properties, '$.isacl') = 'true'` (a partial index is used only for a query naming its condition).
-- Led by the start, as edges' unique (start_id, kind, end_id): the Library's ACL questions read ACL relationships
-- from the nodes holding them. What it costs to write (BENCHMARKS.md, issue 28): the 997,287 relationships of the
-- 56,000-user benchmark graph inserted in random order into a copy of the table (sqlite3) took 17.6 s without it,
-- 21.7-23.4 s with it and the numeric one below, 26.7 s with a twin led by the end as well (as edges_end_kind):
-- that one was left out (walks started at a relationship's end read few nodes, from edges_end_kind as before).
-- SharpHound ingest at 50,000 users, alternated runs: 38.6 / 42.0 / 42.4 / 43.5 s before, 45.1 / 47.8 s after (noisy).
CREATE INDEX edges_acl_start ON edges (start_id, kind, end_id) WHERE json_type(properties, '$.isacl') = 'true';
-- The relationships whose isacl is a number (normally none; SharpHound writes booleans): `r.isacl = true` in SQL
-- (`= 1`) keeps a stored 1 as well, which the engine must see (`WHERE r.isacl` on 1 is a type error). While any
-- exists the store writes the condition as before; this index answers "any?" without reading every relationship.
CREATE INDEX edges_acl_numeric ON edges (id) WHERE json_type(properties, '$.isacl') IN ('integer', 'real');
