import type { Router } from 'express';
import { endpoint } from '@attest/common';
import type { TokenServices } from '../kernel/services';
import { JWKS_MAX_AGE_SECONDS } from '../kernel/signing-keys';
import { sendPrepared } from '../kernel/send-prepared';
import { openCors } from '../kernel/http-steps';
import { jwksDocs } from './jwks-route.openapi';

const JWKS_CACHE_CONTROL = `public, max-age=${JWKS_MAX_AGE_SECONDS}`;

/** GET /jwks (and /jwks.json): the public signing keys, old ones kept until their tokens expire. */
/** What /jwks uses. */
export type JwksRouteDeps = Pick<TokenServices, 'keys'>;

export function jwksRoute(router: Router, ctx: JwksRouteDeps): void {
  const cors = openCors('GET');
  endpoint(
    router,
    ['/jwks', '/jwks.json'],
    {
      GET: [
        cors,
        (req, res) => {
          // warm (nearly always): answered in this tick; else once the key set is loaded
          const doc = ctx.keys.currentJwksDocument();
          if (doc) return sendPrepared(req, res, doc, JWKS_CACHE_CONTROL);
          return ctx.keys.jwksDocument().then((loaded) => sendPrepared(req, res, loaded, JWKS_CACHE_CONTROL));
        },
      ],
      OPTIONS: [cors],
    },
    jwksDocs,
    { fast: true },
  );
}
