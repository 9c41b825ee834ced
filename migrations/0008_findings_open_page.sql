-- Details paging (GET /api/v2/domains/{id}/details) at any skip; see docs/findings.md (Storage, and "details").
-- findings_open_env gains the columns the details filters and the open-row test read (accepted, accepted_until,
-- deleted_at), so that the count, the Accepted filter and the OFFSET walk of the default order (created_at, id)
-- read the index alone (a covering index) instead of one table row per skipped finding. Same name, same
-- leading columns and the same partial WHERE: every query that used it before still can.
DROP INDEX findings_open_env;
CREATE INDEX findings_open_env ON findings (environment_id, finding, created_at, id, accepted, accepted_until, deleted_at) WHERE deleted_at IS NULL;
