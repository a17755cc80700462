import type { Request } from 'express';
import type Joi from 'joi';
import type { EndpointDocs } from '@attest/common';
import type { Html } from './html';

/**
 * A section another feature adds to the account page (issue 42: the agents acting for the person), built in
 * the composition root so the account page imports no feature: its HTML for the signed-in person, and its
 * forms, which the account page mounts behind its session and CSRF checks (each form's schema has `csrf`).
 */
export interface AccountSection {
  /** The section, after "Apps you approved"; its forms carry `csrf` as a hidden field. */
  render(userId: string, csrf: string): Promise<Html>;
  /** What its forms may say after a change (Post/Redirect/Get): a fixed list, by key. */
  notices: Record<string, string>;
  forms: AccountSectionForm[];
}

export interface AccountSectionForm {
  /** POST /account/… */
  path: string;
  schema: Joi.ObjectSchema;
  docs: EndpointDocs;
  /**
   * The change, for the signed-in person: a notice key (then 303 to /account), the page again with an error, or
   * a page of its own (something shown once, such as a token; never stored, never cached).
   */
  handle(
    req: Request,
    userId: string,
  ): Promise<{ notice: string } | { error: string; status: number } | { page: { title: string; body: Html } }>;
}
