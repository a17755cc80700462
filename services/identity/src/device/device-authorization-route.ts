import type { Request, Response, Router } from 'express';
import { AppError, endpoint, sendJson } from '@attest/common';
import { refuseBlockedClient } from '../kernel/failure-limits';
import { noStore, requireFormContentType } from '../kernel/http-steps';
import {
  authenticateApp,
  authenticatedApp,
  OAUTH_TOKEN_ERRORS,
  oauthJsonErrors,
  parseForm,
  type ClientAuthDeps,
} from '../oauth';
import { requireDeviceGrant } from './device-grant';
import type { DeviceFlow } from './device-flow';
import { deviceAuthorizationDocs } from './device-authorization-route.openapi';

/** What /device_authorization uses: client authentication, and the device flow. */
export type DeviceAuthorizationRouteDeps = ClientAuthDeps & { device: Pick<DeviceFlow, 'begin'> };

const FIELDS = ['scope', 'resource', 'acr_values', 'claims'] as const;

/**
 * POST /device_authorization (RFC 8628 §3.1, §3.2): an app the device flow is enabled for authenticates as
 * at /token (a public client by its client_id) and gets a device code to poll /token with, and a user code
 * for the person to type at verification_uri.
 */
export function deviceAuthorizationRoute(router: Router, ctx: DeviceAuthorizationRouteDeps): void {
  const start = async (req: Request, res: Response) => {
    const app = authenticatedApp(res);
    requireDeviceGrant(app);
    const body = req.body as Record<string, unknown>;
    const fields: Partial<Record<(typeof FIELDS)[number], string>> = {};
    for (const name of FIELDS) {
      const value = body[name];
      if (Array.isArray(value))
        throw new AppError(
          name === 'resource' ? 'invalid_target' : 'invalid_request',
          400,
          name === 'resource'
            ? 'Send one resource per request: a token here is bound to a single resource (RFC 8707).'
            : `The ${name} parameter must be given once.`,
          name,
        );
      if (typeof value === 'string' && value !== '') fields[name] = value;
    }
    sendJson(res, await ctx.device.begin(app, fields));
  };
  endpoint(
    router,
    '/device_authorization',
    {
      POST: [
        noStore,
        requireFormContentType,
        parseForm(ctx.config.BODY_LIMIT),
        refuseBlockedClient(ctx.limits),
        authenticateApp(ctx, { allowPost: true, allowPublic: true }),
        start,
      ],
    },
    deviceAuthorizationDocs,
  );
  // answered as /token answers (RFC 8628 §3.2: the error response of RFC 6749 §5.2)
  router.use('/device_authorization', oauthJsonErrors(OAUTH_TOKEN_ERRORS));
}
