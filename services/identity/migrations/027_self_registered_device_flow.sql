-- Security review (issue 41's device flow): a client that registered itself (open registration, without an
-- initial access token, or a Client ID Metadata Document) could enable the device flow, a ready phishing lure
-- (RFC 8628 §5.4). Now it may only where CLIENT_REGISTRATION_ALLOW_DEVICE_FLOW=true (default false). Such
-- clients registered before lose it here; with the setting on, an RFC 7592 update (or the document's next
-- fetch) asking for the grant type gives it back. Operators' apps and token-registered clients keep it.
UPDATE apps SET device_authorization_grant = false
WHERE device_authorization_grant
  AND ((registration = 'dynamic' AND registered_with IS NULL) OR registration = 'metadata_document');
