-- Security review (issue 41's client_credentials): an app acting as itself gets a token for a resource only
-- when the operator named it among the resource's machine clients (Auth0's machine-to-machine grants,
-- Keycloak's service accounts). Before, any confidential app could get a token for any resource, with every
-- scope it offers. Existing resources start with none: operators add the apps that need it.
ALTER TABLE resources ADD COLUMN machine_clients text[] NOT NULL DEFAULT '{}';
