/** A minimal browser over fetch: a cookie jar, manual redirects, and form submission for our pages. */
export type FetchLike = (input: string | URL, init: RequestInit) => Promise<Response>;

export class Browser {
  private readonly cookies = new Map<string, string>();

  /** fetchFn lets a test route requests differently (e.g. resolve host names to a local gateway). */
  constructor(
    private readonly origin: string,
    private readonly fetchFn: FetchLike = fetch,
  ) {}

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const target = new URL(url, this.origin);
    const sameOrigin = target.origin === this.origin;
    const res = await this.fetchFn(target, {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      redirect: 'manual',
      headers: {
        ...(sameOrigin ? { cookie: this.cookieHeader() } : {}),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    if (sameOrigin) this.remember(res);
    return res;
  }

  /**
   * Follows the sign-in and consent pages until the provider hands control back to the app.
   * Returns the redirect URL (query or fragment) or the form_post page's HTML.
   */
  async signIn(
    authorizationUrl: string,
    user: { username: string; password: string },
  ): Promise<{
    location?: string;
    formPost?: { action: string; fields: Record<string, string> };
    /** The page refusing a person below the verification level the app demands (unmet_authentication_requirements). */
    refusal?: { status: number; html: string; backToApp: string };
  }> {
    let res = await this.request(authorizationUrl);
    for (let i = 0; i < 6; i++) {
      if (res.status >= 300 && res.status < 400) {
        const location = new URL(res.headers.get('location')!, this.origin).toString();
        if (!location.startsWith(this.origin)) return { location };
        res = await this.request(location);
        continue;
      }
      const html = await res.text();
      if (html.includes('document.forms[0].submit()')) {
        const action = /<form method="post" action="([^"]+)"/.exec(html)![1].replace(/&amp;/g, '&');
        const fields: Record<string, string> = {};
        for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
          fields[m[1]] = m[2].replace(/&quot;/g, '"').replace(/&amp;/g, '&');
        return { formPost: { action, fields } };
      }
      const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
      const back = /<a id="back-to-app" href="([^"]+)"/.exec(html);
      if (back) return { refusal: { status: res.status, html, backToApp: back[1].replace(/&amp;/g, '&') } };
      if (res.status !== 200) throw new Error(`unexpected page ${res.status}: ${html.slice(0, 300)}`);
      if (html.includes('name="password"')) {
        res = await this.request('/signin', {
          form: {
            interaction: hidden('interaction'),
            csrf: hidden('csrf'),
            username: user.username,
            password: user.password,
          },
        });
      } else if (html.includes('name="decision"')) {
        res = await this.request('/consent', {
          form: { interaction: hidden('interaction'), csrf: hidden('csrf'), decision: 'approve' },
        });
      } else {
        throw new Error(`unexpected page: ${html.slice(0, 300)}`);
      }
    }
    throw new Error('too many steps');
  }
}
