import type { RequestHandler, Response } from 'express';
import { adminTokenHash, DEFAULT_OPERATOR, parseAdminTokens, STORED_ADMIN_TOKEN } from '../audit/admin-tokens';
import { constantTimeEqual } from '../crypto';
import { errors } from '../errors';

export interface AdminCredentials {
  /** ADMIN_TOKEN, named "admin". */
  adminToken?: string;
  /** ADMIN_TOKENS: `name:token,name:token`. */
  adminTokens?: string;
  /** Tokens created through the admin API (`pnpm manage admin-token create`), by hash. */
  stored?: { nameOf(tokenHash: string): Promise<string | null> };
}

/** ADMIN_TOKEN (as "admin") and the ADMIN_TOKENS pairs. */
export function environmentTokens(
  options: Pick<AdminCredentials, 'adminToken' | 'adminTokens'>,
): { name: string; token: string }[] {
  const parsed = parseAdminTokens(options.adminTokens);
  if (typeof parsed === 'string') throw new Error(`ADMIN_TOKENS: ${parsed}`);
  return [...(options.adminToken ? [{ name: DEFAULT_OPERATOR, token: options.adminToken }] : []), ...parsed];
}

/** The operator name of an authenticated admin request (what the audit trail records as "who"). */
export function operatorName(res: Response): string {
  return (res.locals as { operator?: string }).operator ?? DEFAULT_OPERATOR;
}

/**
 * `Authorization: Bearer <token>` for the admin API: compared in constant time with every configured
 * token (no early exit), then, for a token of the CLI's form, looked up by its SHA-256 hash (so a
 * revocation holds on every replica at once). Sets the operator name for the audit trail.
 */
export function requireAdminToken(credentials: string | AdminCredentials): RequestHandler {
  const options: AdminCredentials = typeof credentials === 'string' ? { adminToken: credentials } : credentials;
  const named = environmentTokens(options);
  return (req, res, next) => {
    const match = /^Bearer (.+)$/.exec(req.get('authorization') ?? '');
    if (!match) return next(errors.unauthenticated('An admin token is required.', 'Bearer realm="admin"'));
    const invalid = () =>
      next(errors.unauthenticated('Invalid admin token.', 'Bearer realm="admin", error="invalid_token"'));
    let operator: string | undefined;
    for (const entry of named)
      if (constantTimeEqual(match[1], entry.token) && operator === undefined) operator = entry.name;
    if (operator !== undefined) {
      (res.locals as { operator?: string }).operator = operator;
      return next();
    }
    if (!options.stored || !STORED_ADMIN_TOKEN.test(match[1])) return invalid();
    options.stored.nameOf(adminTokenHash(match[1])).then((name) => {
      if (!name) return invalid();
      (res.locals as { operator?: string }).operator = name;
      next();
    }, next);
  };
}
