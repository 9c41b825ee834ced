-- Issue 28: Cypher counts, DISTINCT and property tests on the library's common node properties answered from
-- indexes instead of reading every node (src/cypher/cypher.store.ts exactBranches; docs/cypher.md "How it runs").
--
-- nodes_kinds_extra: the nodes whose stored kinds are not exactly [kind], [kind, "Base"] or [kind, "AZBase"]
-- (the JSON array json_array writes, text for text: any other spelling lands here too). For every other node
-- "carries label L" (L not Base / AZBase) is exactly "kind = L", which nodes_kind_env and the indexes below
-- answer; the nodes listed here are tested on their kinds array as before. Collected data (SharpHound,
-- AzureHound) lands almost entirely outside it.
CREATE INDEX nodes_kinds_extra ON nodes (id)
  WHERE NOT (kinds = json_array(kind) OR kinds = json_array(kind, 'Base') OR kinds = json_array(kind, 'AZBase'));
-- The properties the Query Library and the console's pre-built queries filter and group on most, each with its
-- JSON type and value exactly as cypher.store.ts propertySql writes them (json_type / json_extract of '$.key'),
-- then the environment (a restricted caller's condition answered from the index too). Measured in BENCHMARKS.md
-- ("Issue 28: node property indexes"): a count or a DISTINCT over them reads the index only.
CREATE INDEX nodes_prop_enabled ON nodes (kind, json_type(properties, '$.enabled'), json_extract(properties, '$.enabled'), environment_id);
CREATE INDEX nodes_prop_hasspn ON nodes (kind, json_type(properties, '$.hasspn'), json_extract(properties, '$.hasspn'), environment_id);
CREATE INDEX nodes_prop_operatingsystem ON nodes (kind, json_type(properties, '$.operatingsystem'), json_extract(properties, '$.operatingsystem'), environment_id);
