-- TOTP multi-factor authentication (BloodHound's AuthSecret.totp_secret / totp_activated). src/auth/mfa.ts.
-- totp_secret: the user's TOTP secret sealed with AES-256-GCM under TOKEN_ENCRYPTION_KEY exactly as API token
--   keys are (src/auth/token-crypto.ts; additional data `mfa:<user id>`, so a sealed secret copied onto another
--   user does not open); NULL: not enrolled. Set by enrolment, cleared by disenrolment.
-- totp_activated: 1 once a code from the secret has been shown (POST …/mfa-activation); from then on login
--   needs `otp`. 0 with a secret: enrolment pending.
-- totp_last_step: the 30-second step of the last code accepted (activation or login); a code of that step or an
--   earlier one is refused, so each code signs in at most once.
ALTER TABLE users ADD COLUMN totp_secret TEXT;
ALTER TABLE users ADD COLUMN totp_activated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN totp_last_step INTEGER;
