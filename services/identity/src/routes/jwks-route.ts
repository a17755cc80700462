import type { Router } from 'express';
import { endpoint } from '@attest/common';
import type { IdentityContext } from './context';
import { sendPrepared } from './send-prepared';
import { openCors } from './steps';
import { identityDocs } from './openapi-document';

/** GET /jwks (and /jwks.json): the public signing keys, old ones kept until their tokens expire. */
export function jwksRoute(router: Router, ctx: IdentityContext): void {
  const cors = openCors('GET');
  endpoint(
    router,
    ['/jwks', '/jwks.json'],
    {
      GET: [cors, async (req, res) => sendPrepared(req, res, await ctx.keys.jwksDocument(), 'public, max-age=300')],
      OPTIONS: [cors],
    },
    identityDocs.jwks,
  );
}
