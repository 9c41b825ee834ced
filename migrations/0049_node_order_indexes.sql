-- Issue 28: ORDER BY … LIMIT on a common node property walks an index in ORDER BY's order instead of sorting every
-- node of the label (src/cypher/cypher.store.ts scanOrdered, ORDER_INDEXED; docs/cypher.md "How it runs"). The
-- index holds per node its primary kind, the property's type rank as ORDER BY ranks it (rankSql: a string 0, a
-- boolean 1, a number 2, null or missing 3, a map or list 4) and its value, then the id: exactly the order
-- `ORDER BY rank, value, id` the store reads. `pwdlastset` (the library's "oldest passwords" and the console's
-- password-age queries). Measured in BENCHMARKS.md ("Issue 28: ORDER BY … LIMIT from an order index").
CREATE INDEX nodes_order_pwdlastset ON nodes (kind, CASE json_type(properties, '$.pwdlastset') WHEN 'text' THEN 0 WHEN 'true' THEN 1 WHEN 'false' THEN 1 WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'object' THEN 4 WHEN 'array' THEN 4 ELSE 3 END, json_extract(properties, '$.pwdlastset'));
