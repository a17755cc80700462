import type { NextFunction, Request, Response } from 'express';
import { AppError, errors, sendJson } from '@attest/common';
import type { App } from '../kernel/app-store';
import { grantField, tokenDpopJkt, type TokenGrantDeps } from '../oauth';
import type { DeviceFlow } from './device-flow';

/** The grant type of RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** What grant_type=urn:ietf:params:oauth:grant-type:device_code at /token uses. */
export interface DeviceGrantDeps extends TokenGrantDeps {
  device: Pick<DeviceFlow, 'poll'>;
}

/** An app uses the device flow only when it is enabled for it (unauthorized_client otherwise). */
export function requireDeviceGrant(app: App): void {
  if (!app.deviceAuthorizationGrant)
    throw new AppError(
      'unauthorized_client',
      400,
      'This app may not use the device flow: an operator enables it with `pnpm manage app update ID --device-flow` ' +
        '(admin API device_authorization_grant), or a registration asks for its grant type.',
      'grant_type',
    );
}

/**
 * POST /token with the device code (RFC 8628 §3.4), after the app's authentication as at the code exchange
 * (a public client by client_id): the answer of the poll, or the tokens once. A DPoP proof binds them.
 */
export function deviceCodeGrant(deps: DeviceGrantDeps) {
  return async (req: Request, res: Response, _next: NextFunction) => {
    const app = res.locals.app as App;
    requireDeviceGrant(app);
    const deviceCode = grantField(req, 'device_code');
    if (!deviceCode) throw errors.required('device_code');
    const dpopJkt = await tokenDpopJkt(deps, req, res, app);
    const result = await deps.device.poll(app, deviceCode, { dpopJkt, resource: grantField(req, 'resource') });
    sendJson(res, result);
  };
}
