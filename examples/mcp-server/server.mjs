// An MCP server (Model Context Protocol, Streamable HTTP) protected by Attest: MCP clients (an AI assistant,
// a CLI, an agent) discover Attest from its 401, register themselves there, sign a person in with PKCE and
// `resource`, and call its tools with the access token Attest gives them for this server.
//
//   node examples/mcp-server/server.mjs          → http://localhost:3004/mcp
//
// ISSUER (Attest, default http://localhost:4000), PORT (3004), RESOURCE (this server's URL, as registered with
// `pnpm manage resource create --uri …`; default http://localhost:PORT/mcp), SCOPES (asked for, space-separated;
// default openid).
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

const ISSUER = (process.env.ISSUER ?? 'http://localhost:4000').replace(/\/+$/, '');
const PORT = Number(process.env.PORT ?? 3004);
const RESOURCE = process.env.RESOURCE ?? `http://localhost:${PORT}/mcp`;
const SCOPES = (process.env.SCOPES ?? 'openid').split(' ').filter(Boolean);
const ORB = 'urn:attest:loa:orb';
const ORB_TOOL = 'verified_human_greeting';

// RFC 9728 §3.1: the metadata of a resource with a path lives at the well-known path followed by that path
const resourcePath = new URL(RESOURCE).pathname.replace(/\/+$/, '');
const METADATA_PATH = `/.well-known/oauth-protected-resource${resourcePath === '' ? '' : resourcePath}`;
const METADATA_URL = `${new URL(RESOURCE).origin}${METADATA_PATH}`;

/** RFC 9728 §2: who protects this server, and how to send it a token. */
const protectedResourceMetadata = {
  resource: RESOURCE,
  authorization_servers: [ISSUER],
  bearer_methods_supported: ['header'],
  scopes_supported: SCOPES,
  resource_name: 'Attest example MCP server',
};

// Attest's signing keys, from the jwks_uri of its RFC 8414 metadata (fetched once, then cached by jose)
let jwks;
async function keys() {
  if (!jwks) {
    const res = await fetch(`${ISSUER}/.well-known/oauth-authorization-server`);
    if (!res.ok) throw new Error(`Attest's metadata: ${res.status}`);
    jwks = createRemoteJWKSet(new URL((await res.json()).jwks_uri));
  }
  return jwks;
}

const quoted = (value) => `"${String(value).replace(/["\\]/g, '')}"`;
/** RFC 6750 §3 with RFC 9728 §5.1's resource_metadata: where a client finds out how to get a token. */
function challenge(res, status, params = {}) {
  const fields = { ...params, resource_metadata: METADATA_URL };
  res
    .status(status)
    .set(
      'WWW-Authenticate',
      `Bearer ${Object.entries(fields)
        .map(([k, v]) => `${k}=${quoted(v)}`)
        .join(', ')}`,
    )
    .json({
      error: params.error ?? 'unauthorized',
      error_description: params.error_description ?? 'Sign in with Attest.',
    });
}

/**
 * An Attest access token (RFC 9068): signed by a key of Attest's JWKS, typ at+jwt, issued by ISSUER, for this
 * server (aud = RESOURCE: a token for another server is refused), not expired.
 */
async function authenticate(req, res, next) {
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(req.get('authorization') ?? '');
  if (!match) return challenge(res, 401);
  try {
    const { payload } = await jwtVerify(match[1], await keys(), {
      issuer: ISSUER,
      audience: RESOURCE,
      typ: 'at+jwt',
      algorithms: ['RS256', 'PS256', 'ES256'],
    });
    req.auth = {
      token: match[1],
      clientId: payload.client_id,
      scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [],
      expiresAt: payload.exp,
      extra: { sub: payload.sub, acr: payload.acr },
    };
    next();
  } catch (err) {
    challenge(res, 401, { error: 'invalid_token', error_description: `The access token is refused: ${err.message}` });
  }
}

/**
 * RFC 9470: the orb tool needs a person verified with an orb. A call by anyone else is answered with the
 * step-up challenge, naming the acr the client should ask Attest for (acr_values), before the tool runs.
 */
function requireOrbForOrbTool(req, res, next) {
  const calls = [].concat(req.body ?? []);
  const wantsOrbTool = calls.some((m) => m?.method === 'tools/call' && m.params?.name === ORB_TOOL);
  if (wantsOrbTool && req.auth.extra.acr !== ORB)
    return challenge(res, 401, {
      error: 'insufficient_user_authentication',
      error_description: 'This tool needs a person verified with an orb.',
      acr_values: ORB,
    });
  next();
}

/** The MCP server of one request (stateless Streamable HTTP): two tools, each knowing who calls. */
function mcpServer(auth) {
  const server = new McpServer({ name: 'attest-example', version: '1.0.0' });
  server.registerTool(
    'whoami',
    { description: 'Who is signed in: the pairwise subject, the verification level and the client.' },
    async () => ({
      content: [
        {
          type: 'text',
          text: JSON.stringify({
            sub: auth.extra.sub,
            acr: auth.extra.acr,
            client_id: auth.clientId,
            scopes: auth.scopes,
          }),
        },
      ],
    }),
  );
  server.registerTool(
    ORB_TOOL,
    { description: 'A greeting only a person verified with an orb receives (acr urn:attest:loa:orb).' },
    async () =>
      auth.extra.acr === ORB
        ? { content: [{ type: 'text', text: `Hello, verified human ${auth.extra.sub}.` }] }
        : { isError: true, content: [{ type: 'text', text: 'This tool needs a person verified with an orb.' }] },
  );
  return server;
}

const app = express();
app.use(express.json({ limit: '1mb' }));
app.get([METADATA_PATH, '/.well-known/oauth-protected-resource'], (_req, res) => {
  res.set('Access-Control-Allow-Origin', '*').json(protectedResourceMetadata);
});
app.post(resourcePath || '/', authenticate, requireOrbForOrbTool, async (req, res) => {
  const server = mcpServer(req.auth);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
// stateless: no server-sent stream to open, no session to end
app.all(resourcePath || '/', authenticate, (_req, res) => {
  res.status(405).set('Allow', 'POST').json({ error: 'method_not_allowed' });
});

app.listen(PORT, () => {
  console.log(`MCP server on ${RESOURCE} (protected by ${ISSUER}; metadata ${METADATA_URL})`);
});
