import type Joi from 'joi';
import { toJsonSchema, type EndpointDocs } from '@attest/common';
import * as account from '../src/account/account-route';
import * as authorize from '../src/oauth/authorize-route';
import * as consent from '../src/oauth/consent-route';
import * as ciba from '../src/ciba/ciba-forms';
import * as delegation from '../src/delegation/delegation-forms';
import * as device from '../src/device/device-forms';
import { checkedValue, firstFailure } from '../src/kernel/form-check';
import * as introspect from '../src/oauth/introspect-route';
import * as logout from '../src/signin/logout-route';
import * as par from '../src/oauth/par-route';
import { identityDocs } from '../src/api-documents';
import * as revoke from '../src/oauth/revoke-route';
import * as signin from '../src/signin/signin-route';
import * as signup from '../src/signin/signup-route';
import * as token from '../src/oauth/token-route';

type Where = 'query' | 'body';
const docs = identityDocs as Record<string, EndpointDocs>;
const documented = (route: string, method: 'GET' | 'POST', where: Where): unknown => {
  const op = (docs[route] as Record<string, { query?: unknown; body?: { schema: unknown } }>)[method];
  return where === 'query' ? op.query : op.body?.schema;
};

/** Each documented form or query string, and the schema its route module checks requests with. */
const checked: [string, 'GET' | 'POST', Where, Joi.ObjectSchema][] = [
  ['authorize', 'GET', 'query', authorize.AUTHORIZE_PARAMETERS],
  ['authorize', 'POST', 'body', authorize.AUTHORIZE_PARAMETERS],
  ['token', 'POST', 'body', token.TOKEN_FORM],
  ['introspect', 'POST', 'body', introspect.INTROSPECT_FORM],
  ['revoke', 'POST', 'body', revoke.REVOKE_FORM],
  ['signin', 'GET', 'query', signin.SIGNIN_QUERY],
  ['signin', 'POST', 'body', signin.SIGNIN_FORM],
  ['signup', 'GET', 'query', signup.SIGNIN_QUERY],
  ['signup', 'POST', 'body', signup.SIGNUP_FORM],
  ['consent', 'GET', 'query', consent.INTERACTION_QUERY],
  ['consent', 'POST', 'body', consent.CONSENT_FORM],
  ['account', 'GET', 'query', account.ACCOUNT_QUERY],
  ['withdrawConsent', 'POST', 'body', account.ACCOUNT_FORMS.withdrawConsent],
  ['addPasskey', 'POST', 'body', account.ACCOUNT_FORMS.addPasskey],
  ['removePasskey', 'POST', 'body', account.ACCOUNT_FORMS.removePasskey],
  ['changePassword', 'POST', 'body', account.ACCOUNT_FORMS.changePassword],
  ['endSession', 'POST', 'body', account.ACCOUNT_FORMS.endSession],
  ['endOtherSessions', 'POST', 'body', account.ACCOUNT_FORMS.endOtherSessions],
  // issue 42: the account page's section of agents acting for the person
  ['endAgent', 'POST', 'body', delegation.END_AGENT_FORM],
  // the person makes an agent a login_hint_token (CIBA)
  ['loginHint', 'POST', 'body', ciba.LOGIN_HINT_FORM],
  ['logoutConfirm', 'POST', 'body', logout.LOGOUT_CONFIRM_FORM],
  // issue 41: the device flow
  ['deviceAuthorization', 'POST', 'body', device.DEVICE_AUTHORIZATION_FORM],
  ['device', 'GET', 'query', device.DEVICE_QUERY],
  ['device', 'POST', 'body', device.DEVICE_FORM],
  // issue 42: CIBA, and the account page's approvals
  ['bcAuthorize', 'POST', 'body', ciba.BC_AUTHORIZE_FORM],
  ['approve', 'POST', 'body', ciba.APPROVAL_FORMS.approve],
  ['deny', 'POST', 'body', ciba.APPROVAL_FORMS.deny],
];

/**
 * Documented, but checked by signin/logout-request.ts: every parameter is an optional single string (a
 * repeat of any parameter is refused first), and what is checked is what the values mean.
 */
const parsedByHand: [string, 'GET' | 'POST', Where, Joi.ObjectSchema][] = [
  ['logout', 'GET', 'query', logout.LOGOUT_PARAMETERS],
  ['logout', 'POST', 'body', logout.LOGOUT_PARAMETERS],
  // the authorization request's parameters, checked by parseAuthorizationRequest as at /authorize
  ['par', 'POST', 'body', par.PAR_FORM],
];

/** JSON documents, not forms: RFC 7591 client metadata, checked field by field by registration/. */
const jsonDocuments: [string, 'POST', 'body'][] = [['register', 'POST', 'body']];

describe('identity request schemas', () => {
  it.each(checked)('%s %s: the document shows the %s schema the route checks', (route, method, where, schema) => {
    expect(documented(route, method, where)).toBe(schema);
  });

  it.each(parsedByHand)('%s %s: the document shows the shared %s schema', (route, method, where, schema) => {
    expect(documented(route, method, where)).toBe(schema);
  });

  it('documents /register’s body as RFC 7591 client metadata (JSON)', () => {
    const schema = documented('register', 'POST', 'body') as { type: string; properties: Record<string, unknown> };
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['redirect_uris', 'token_endpoint_auth_method', 'client_name']),
    );
  });

  it('every documented form and query string is one of those', () => {
    const all = Object.entries(docs).flatMap(([route, ops]) =>
      (['GET', 'POST'] as const).flatMap((method) =>
        (['query', 'body'] as const)
          .filter((where) => method in ops && documented(route, method, where) !== undefined)
          .map((where) => `${route} ${method} ${where}`),
      ),
    );
    const listed = [...checked, ...parsedByHand, ...jsonDocuments].map(
      ([route, method, where]) => `${route} ${method} ${where}`,
    );
    expect(all.sort()).toEqual(listed.sort());
  });

  it('every form accepts fields it does not name, and says so in the document', () => {
    for (const [, , , schema] of [...checked, ...parsedByHand]) {
      expect(schema.describe().flags).toMatchObject({ unknown: true });
      expect(toJsonSchema(schema)).toMatchObject({ type: 'object', additionalProperties: true });
    }
  });

  it('reads a field as the schema does: empty is absent, a repeat or a refused value fails it', () => {
    const form = token.TOKEN_FORM;
    expect(firstFailure(form, { grant_type: 'authorization_code', code: 'c', redirect_uri: 'r' })).toBeNull();
    expect(firstFailure(form, { grant_type: '' })).toMatchObject({ name: 'grant_type', problem: 'missing' });
    expect(firstFailure(form, { grant_type: ['a', 'b'] })).toMatchObject({ name: 'grant_type', problem: 'repeated' });
    expect(firstFailure(form, { grant_type: 'password' })).toEqual({
      name: 'grant_type',
      problem: 'invalid',
      message: 'grant_type must be [authorization_code]',
    });
    expect(firstFailure(form, { grant_type: 'authorization_code', code: 'c' })).toMatchObject({
      name: 'redirect_uri',
      problem: 'missing',
    });
    expect(firstFailure(form, {}, ['code', 'grant_type'])).toMatchObject({ name: 'code' });
    expect(checkedValue(signup.SIGNUP_FORM, { username: '  ada.l  ' }, 'username')).toBe('ada.l');
    expect(checkedValue(signup.SIGNUP_FORM, { username: 'a b' }, 'username')).toBeUndefined();
    expect(checkedValue(signup.SIGNUP_FORM, { username: ['ada', 'bob'] }, 'username')).toBeUndefined();
    expect(checkedValue(account.ACCOUNT_FORMS.changePassword, { new_password: '1234567' }, 'new_password')).toBe(
      undefined,
    );
  });
});
