-- A per-app minimum verification level (issue 24): /authorize refuses a person below it with
-- unmet_authentication_requirements. NULL: no minimum.
ALTER TABLE apps ADD COLUMN min_verification_level text
  CHECK (min_verification_level IN ('orb', 'device'));
