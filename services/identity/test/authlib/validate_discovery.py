"""Validates a discovery document with Authlib's own check (OpenIDProviderMetadata.validate()).

Reads the document (JSON) on stdin; prints {"valid": true} or {"valid": false, "error": "..."}.
Used by services/identity/test/authlib-clients.int.test.ts (issue 40, item 3).
"""
import json
import sys

from authlib.oidc.discovery import OpenIDProviderMetadata

metadata = OpenIDProviderMetadata(json.load(sys.stdin))
try:
    metadata.validate()
    print(json.dumps({"valid": True}))
except Exception as error:  # Authlib raises ValueError (or a subclass) naming the field
    print(json.dumps({"valid": False, "error": f"{type(error).__name__}: {error}"}))
