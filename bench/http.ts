/** Small HTTP helpers for setting up the scenarios (not on the measured path). */
import { createHash, randomBytes } from 'node:crypto';

/** Remembers the cookies a server sets, to replay a signed-in browser session. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  /** The Cookie header; `only` keeps the cookies whose name starts with it (those a browser sends to the path). */
  header(only = ''): string {
    return [...this.cookies]
      .filter(([k]) => k.startsWith(only))
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
  }
  /** A fetch that sends and keeps this jar's cookies (one origin), redirects not followed. */
  fetch = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', this.header());
    const res = await fetch(input, { ...init, headers, redirect: 'manual' });
    this.remember(res);
    return res;
  };
}

export const basicAuth = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A PKCE pair (S256); one pair is reused for every trip, as the cost per trip is the same. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function form(values: Record<string, string>): string {
  return new URLSearchParams(values).toString();
}

/** The code from a redirect to the app, or a reason it is not there. */
export function codeFrom(location: string | undefined): { code?: string; problem?: string } {
  if (!location) return { problem: 'no Location' };
  const q = location.indexOf('?');
  if (q < 0) return { problem: 'no query in Location' };
  const code = new URLSearchParams(location.slice(q + 1)).get('code');
  return code ? { code } : { problem: 'no code in Location' };
}

export async function expectJson<T>(res: Response, what: string): Promise<T> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}
