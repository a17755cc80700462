import type { Response } from 'express';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** Tagged template that escapes every interpolated value unless it is already `Html`. */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((v, i) => {
    const rendered = Array.isArray(v) ? v.map((x) => (x instanceof Html ? x.value : escapeHtml(String(x)))).join('') : v instanceof Html ? v.value : escapeHtml(String(v ?? ''));
    out += rendered + strings[i + 1];
  });
  return new Html(out);
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;padding:2rem;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08);width:min(24rem,90vw)}
h1{font-size:1.3rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #ccd;border-radius:6px;font-size:1rem}
button{margin-top:1.2rem;padding:.65rem 1.2rem;border:0;border-radius:6px;font-size:1rem;cursor:pointer;background:#1f4fd1;color:#fff}
button.secondary{background:#e4e6eb;color:#222;margin-left:.5rem}.error{color:#b00020;margin:.5rem 0}ul{padding-left:1.2rem}code{background:#f0f0f0;padding:0 .2rem}`;

export function page(title: string, body: Html): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body.value}</main></body></html>`;
}

/** Pages are never cached, never framed, and may only post back to us. */
export function sendPage(res: Response, status: number, title: string, body: Html, formAction = "'self'"): void {
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      'X-Frame-Options': 'DENY',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    })
    .send(page(title, body));
}
