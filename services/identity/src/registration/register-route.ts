import type { NextFunction, Request, Response, Router } from 'express';
import { AppError, clientAddress, endpoint, errors, jsonBody, requestActor, type AuditActor } from '@attest/common';
import { noStore, openCors } from '../kernel/http-steps';
import type { KernelServices } from '../kernel/services';
import type { Registrations } from './registrations';
import { registerDocs, registrationClientDocs } from './register-route.openapi';

/** What /register and /register/{client_id} use. */
export type RegisterRouteDeps = Pick<KernelServices, 'config'> & { registrations: Registrations };

const requireJson = (req: Request, _res: Response, next: NextFunction) =>
  next(
    req.is('application/json')
      ? undefined
      : new AppError('invalid_content_type', 400, 'The body must be JSON (Content-Type: application/json).', null, {
          extra: {
            error: 'invalid_request',
            error_description: 'The body must be JSON (Content-Type: application/json).',
          },
        }),
  );

/** The Bearer token of the Authorization header, if one is sent. */
const bearerOf = (req: Request): string | undefined => {
  const match = /^Bearer\s+([\x21-\x7e]+)\s*$/i.exec(req.get('authorization') ?? '');
  return match?.[1];
};

/** The client acting on its own registration (RFC 7592), with the request's id and address. */
const clientActor = (req: Request, id: string): AuditActor => ({
  ...requestActor(req, 'anonymous', null),
  type: 'app',
  id,
});

/**
 * POST /register (RFC 7591) and GET|PUT|DELETE /register/{client_id} (RFC 7592, with the registration access
 * token), while CLIENT_REGISTRATION is not off (404 then, as for any unknown path).
 */
export function registerRoute(router: Router, ctx: RegisterRouteDeps): void {
  const { registrations } = ctx;
  const enabled = (_req: Request, _res: Response, next: NextFunction) =>
    next(registrations.policy === 'off' ? errors.notFound() : undefined);
  const register = async (req: Request, res: Response) => {
    const information = await registrations.register(req.body, {
      bearer: bearerOf(req),
      address: clientAddress(req),
      actor: requestActor(req, 'anonymous', null),
    });
    res.status(201).location(information.registration_client_uri).json(information);
  };
  const id = (req: Request) => String(req.params.client_id);
  endpoint(
    router,
    '/register',
    {
      POST: [enabled, openCors('POST'), noStore, requireJson, jsonBody(ctx.config.BODY_LIMIT), register],
      OPTIONS: [enabled, openCors('POST')],
    },
    registerDocs,
  );
  endpoint(
    router,
    '/register/:client_id',
    {
      GET: [
        enabled,
        noStore,
        async (req, res) => {
          res.json(await registrations.read(id(req), bearerOf(req)));
        },
      ],
      PUT: [
        enabled,
        noStore,
        requireJson,
        jsonBody(ctx.config.BODY_LIMIT),
        async (req, res) => {
          res.json(await registrations.update(id(req), bearerOf(req), req.body, clientActor(req, id(req))));
        },
      ],
      DELETE: [
        enabled,
        noStore,
        async (req, res) => {
          await registrations.remove(id(req), bearerOf(req), clientActor(req, id(req)));
          res.status(204).end();
        },
      ],
    },
    registrationClientDocs,
  );
}
