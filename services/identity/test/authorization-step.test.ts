import type { AuthorizationRequest, Prompt } from '../src/oauth/authorization-request';
import { nextStep } from '../src/oauth/authorization-step';

const request = (prompt: Prompt[] = [], extra: Partial<AuthorizationRequest> = {}): AuthorizationRequest => ({
  clientId: 'app_x',
  redirectUri: 'http://localhost:3000/cb',
  responseType: 'code',
  responseMode: 'query',
  scopes: ['openid', 'email'],
  prompt,
  ...extra,
});
const now = () => Math.floor(Date.now() / 1000);
const session = { userId: 'usr_1', authTime: now() - 100 };
const all = ['email', 'openid'];

describe('nextStep', () => {
  it('signed in and consented: finish, with no page', () => {
    expect(nextStep(request(), {}, session, all)).toBe('finish');
  });

  it('no session: sign-in, or login_required under prompt=none', () => {
    expect(nextStep(request(), {}, null, all)).toBe('signin');
    expect(nextStep(request(['none']), {}, null, all)).toBe('login_required');
  });

  it('a scope not consented: consent, or consent_required under prompt=none', () => {
    expect(nextStep(request(), {}, session, ['openid'])).toBe('consent');
    expect(nextStep(request(['none']), {}, session, [])).toBe('consent_required');
  });

  it('prompt=login asks again unless this interaction signed in', () => {
    expect(nextStep(request(['login']), {}, session, all)).toBe('signin');
    expect(nextStep(request(['login']), { signedIn: true }, session, all)).toBe('finish');
  });

  it('prompt=consent asks again unless this interaction consented', () => {
    expect(nextStep(request(['consent']), {}, session, all)).toBe('consent');
    expect(nextStep(request(['consent']), { consented: true }, session, all)).toBe('finish');
  });

  it('max_age: an older sign-in asks again; max_age=0 always does', () => {
    expect(nextStep(request([], { maxAge: 50 }), {}, session, all)).toBe('signin');
    expect(nextStep(request([], { maxAge: 500 }), {}, session, all)).toBe('finish');
    expect(nextStep(request([], { maxAge: 0 }), {}, session, all)).toBe('signin');
    expect(nextStep(request([], { maxAge: 0 }), { signedIn: true }, session, all)).toBe('finish');
  });

  it('prompt=none: a session too old for max_age is login_required, never a page', () => {
    expect(nextStep(request(['none'], { maxAge: 50 }), {}, session, all)).toBe('login_required');
    expect(nextStep(request(['none'], { maxAge: 0 }), {}, session, all)).toBe('login_required');
    expect(nextStep(request(['none'], { maxAge: 500 }), {}, session, all)).toBe('finish');
  });

  it('prompt=none with a session and every scope consented finishes silently', () => {
    expect(nextStep(request(['none']), {}, session, all)).toBe('finish');
  });

  it('prompt=consent under prompt=none is consent_required even when every scope was granted', () => {
    expect(nextStep(request(['none', 'consent']), {}, session, all)).toBe('consent_required');
  });

  it('prompt=login and prompt=consent together: sign-in first, then consent, then finish', () => {
    const both = request(['login', 'consent']);
    expect(nextStep(both, {}, session, all)).toBe('signin');
    expect(nextStep(both, { signedIn: true }, session, all)).toBe('consent');
    expect(nextStep(both, { signedIn: true, consented: true }, session, all)).toBe('finish');
  });

  it('an interaction marked signed in whose session is gone signs in again', () => {
    expect(nextStep(request(), { signedIn: true }, null, all)).toBe('signin');
    expect(nextStep(request(['none']), { signedIn: true }, null, all)).toBe('login_required');
  });

  it('consent given in this interaction does not cover scopes it did not grant', () => {
    expect(nextStep(request(), { signedIn: true, consented: true }, session, ['openid'])).toBe('consent');
  });
});
