-- When a user's password stops being accepted as is (BloodHound's AuthSecret.expires_at): login answers
-- auth_expired: true once this time has passed, and the console asks for a new password before anything else.
-- NULL: the password does not expire (every user before this migration). Set to the change's time by an
-- administrator's "must change at next sign-in" (user creation or PUT …/secret with needs_password_reset, or
-- DELETE …/secret); cleared when the user sets a new password of their own.
ALTER TABLE users ADD COLUMN secret_expires_at TEXT;
