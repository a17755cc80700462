import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { errors } from '../errors';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time check of `Authorization: Bearer <ADMIN_TOKEN>`. */
export function requireAdminToken(adminToken: string): RequestHandler {
  const expected = digest(adminToken);
  return (req, _res, next) => {
    const match = /^Bearer (.+)$/.exec(req.get('authorization') ?? '');
    if (!match) return next(errors.unauthenticated('An admin token is required.', 'Bearer realm="admin"'));
    if (!timingSafeEqual(digest(match[1]), expected))
      return next(errors.unauthenticated('Invalid admin token.', 'Bearer realm="admin", error="invalid_token"'));
    next();
  };
}
