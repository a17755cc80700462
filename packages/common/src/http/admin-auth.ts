import type { RequestHandler } from 'express';
import { constantTimeEqual } from '../crypto';
import { errors } from '../errors';

/** Constant-time check of `Authorization: Bearer <ADMIN_TOKEN>`. */
export function requireAdminToken(adminToken: string): RequestHandler {
  return (req, _res, next) => {
    const match = /^Bearer (.+)$/.exec(req.get('authorization') ?? '');
    if (!match) return next(errors.unauthenticated('An admin token is required.', 'Bearer realm="admin"'));
    if (!constantTimeEqual(match[1], adminToken))
      return next(errors.unauthenticated('Invalid admin token.', 'Bearer realm="admin", error="invalid_token"'));
    next();
  };
}
