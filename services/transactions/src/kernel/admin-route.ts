import type { Request, Response } from 'express';
import { auditOperatorAction, validate, type AuditLog } from '@attest/common';
import { appIdParams } from './admin-params';

/** The `{app_id}` of an /apps/{app_id}/… path, checked (400 naming app_id). */
export const appIdOf = (req: Request): string => validate(appIdParams, { app_id: req.params.app_id }).app_id as string;

/** Records an operator's change in the audit trail (the admin token's actor), when there is one. */
export const operatorAudit =
  (audit: Pick<AuditLog, 'record'> | undefined) =>
  (req: Request, res: Response, type: string, subject: string, detail: Record<string, unknown>) =>
    audit ? auditOperatorAction(audit, req, res, { type, subject, detail }) : undefined;
