"""Redeems a code at a token endpoint with Authlib's private_key_jwt client authentication.

The client assertion is made by Authlib's own client auth method, authlib.oauth2.rfc7523.PrivateKeyJWT
(the hook authlib.integrations.requests_client.OAuth2Session calls; the requests package is not installed
here, so the request itself goes out with urllib): RS256, iss = sub = client_id, aud = the token endpoint's
URL, a jti, exp one hour ahead unless --exp-seconds gives Authlib another (its claims parameter).

Arguments: token_endpoint client_id private_key_pem_file code redirect_uri [--exp-seconds N]
Prints {"status": ..., "body": {...}, "assertion_claims": {...}}.
Used by services/identity/test/authlib-clients.int.test.ts (issue 40, item 4).
"""
import base64
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from authlib.oauth2.rfc7523 import PrivateKeyJWT

token_endpoint, client_id, key_file, code, redirect_uri = sys.argv[1:6]
claims = None
if len(sys.argv) > 7 and sys.argv[6] == "--exp-seconds":
    claims = {"exp": int(time.time()) + int(sys.argv[7])}
with open(key_file) as f:
    private_key = f.read()


class ClientCredentials:
    """What Authlib's client auth methods read: client_id, and the private key as client_secret."""

    def __init__(self, client_id, client_secret):
        self.client_id = client_id
        self.client_secret = client_secret


body = f"grant_type=authorization_code&code={code}&redirect_uri={urllib.parse.quote(redirect_uri, safe='')}"
headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
auth = PrivateKeyJWT(token_endpoint, claims=claims)
uri, headers, body = auth(ClientCredentials(client_id, private_key), "POST", token_endpoint, headers, body)

assertion = dict(urllib.parse.parse_qsl(body))["client_assertion"]
payload = assertion.split(".")[1]
assertion_claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))

request = urllib.request.Request(uri, data=body.encode(), headers=headers, method="POST")
try:
    with urllib.request.urlopen(request) as response:
        status, text = response.status, response.read().decode()
except urllib.error.HTTPError as error:
    status, text = error.code, error.read().decode()
print(json.dumps({"status": status, "body": json.loads(text), "assertion_claims": assertion_claims}))
