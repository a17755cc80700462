import fs from 'node:fs';
import path from 'node:path';

/**
 * The documentation stands on its own: every relative link in README.md and docs/ (and the
 * examples' and bench's READMEs) reaches a file of the repository, every #anchor a heading of it, and
 * nothing points at files that are not in the repository.
 */
const ROOT = path.resolve(__dirname, '..');
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'examples/README.md',
  'bench/README.md',
];

/** The text outside fenced code blocks, line by line (code lines blanked, so line numbers hold). */
function proseLines(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((line) => {
    const opening = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence === null && opening) {
      fence = opening;
      return '';
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence)) fence = null;
      return '';
    }
    return line;
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2… */
export function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link counts by its text
      .replace(/(^|\W)[*_]+|[*_]+(?=\W|$)/g, '$1'); // emphasis marks
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Each problem with the relative links of one Markdown file, as "file:line: [text](target) — why". */
export function brokenLinks(file: string, markdown: string, root = ROOT): string[] {
  const problems: string[] = [];
  proseLines(markdown).forEach((line, i) => {
    const prose = line.replace(/`[^`]*`/g, '``'); // not links: code spans
    for (const [link, target] of prose.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not a file of the repository
      const where = `${file}:${i + 1}: ${link}`;
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = pathPart ? path.resolve(root, path.dirname(file), decodeURI(pathPart)) : path.join(root, file);
      if (!resolved.startsWith(root + path.sep)) {
        problems.push(`${where} — points outside the repository`);
        continue;
      }
      if (!fs.existsSync(resolved)) {
        problems.push(`${where} — no such file: ${path.relative(root, resolved)}`);
        continue;
      }
      if (anchor !== undefined) {
        if (!resolved.endsWith('.md')) problems.push(`${where} — an anchor into a file that is not Markdown`);
        else if (!headingAnchors(pathPart ? fs.readFileSync(resolved, 'utf8') : markdown).has(anchor))
          problems.push(`${where} — ${path.relative(root, resolved)} has no heading #${anchor}`);
      }
    }
  });
  return problems;
}

/** Mentions of files outside the repository that readers cannot open. */
export function outsideReferences(file: string, markdown: string): string[] {
  return markdown
    .split('\n')
    .flatMap((line, i) =>
      [/\.\.\/shared\b/, /\bSPEC\b/, /\bSPEC\.md\b/i, /\bDESIGN\.md\b/i]
        .filter((pattern) => pattern.test(line))
        .map((pattern) => `${file}:${i + 1}: mentions ${pattern.source.replace(/\\b|\\/g, '')}: ${line.trim()}`),
    );
}

describe('documentation links', () => {
  it.each(DOCS)('%s: every relative link reaches a file, and every #anchor a heading', (file) => {
    expect(brokenLinks(file, fs.readFileSync(path.join(ROOT, file), 'utf8'))).toEqual([]);
  });

  it.each(DOCS)('%s never mentions ../shared, SPEC or DESIGN.md', (file) => {
    expect(outsideReferences(file, fs.readFileSync(path.join(ROOT, file), 'utf8'))).toEqual([]);
  });

  it('finds a broken link by file, line and target, and ignores links in code', () => {
    const markdown = [
      '# Title',
      '',
      'See [the API](docs/api.md), [nowhere](docs/nowhere.md), [a heading](#title) and [no heading](#missing).',
      '[up](../outside.md) [external](https://example.com/x.md) `[code](docs/nope.md)`',
      '```',
      '[in a block](docs/nope.md)',
      '```',
      'Into another file: [errors](docs/api.md#errors), [not there](docs/api.md#nope).',
    ].join('\n');
    expect(brokenLinks('README.md', markdown)).toEqual([
      'README.md:3: [nowhere](docs/nowhere.md) — no such file: docs/nowhere.md',
      'README.md:3: [no heading](#missing) — README.md has no heading #missing',
      'README.md:4: [up](../outside.md) — points outside the repository',
      'README.md:8: [not there](docs/api.md#nope) — docs/api.md has no heading #nope',
    ]);
  });

  it('makes anchors as GitHub does', () => {
    const anchors = headingAnchors(
      [
        '## What `pending`, `mined` and `failed` mean',
        '## Where state lives — and why',
        '## "Sign in with Attest" (app developers)',
        '## Client addresses: `TRUST_PROXY`',
        '## Webhooks',
        '### Webhooks',
        '```sh',
        '# not a heading',
        '```',
      ].join('\n'),
    );
    expect([...anchors]).toEqual([
      'what-pending-mined-and-failed-mean',
      'where-state-lives--and-why',
      'sign-in-with-attest-app-developers',
      'client-addresses-trust_proxy',
      'webhooks',
      'webhooks-1',
    ]);
  });

  it('finds mentions of files outside the repository', () => {
    expect(outsideReferences('docs/x.md', 'as SPEC §7 says\nsee ../shared/notes\nfine: SPECIFIC\nDESIGN.md')).toEqual([
      'docs/x.md:1: mentions SPEC: as SPEC §7 says',
      'docs/x.md:2: mentions ../shared: see ../shared/notes',
      'docs/x.md:4: mentions DESIGN.md: DESIGN.md',
    ]);
  });
});
