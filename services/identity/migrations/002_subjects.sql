-- pairwise subject → user, per app: lets /userinfo find the person behind a token without putting
-- a correlatable user id in the token
CREATE TABLE subjects (
  app_id     text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  sub        text NOT NULL,
  user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, sub)
);
