import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { limitHeapGrowth } from '../src';

interface Growth {
  /** the largest old generation seen under the churn, bytes */
  largest: number;
  /** what a full collection kept afterwards, bytes */
  kept: number;
}

/** The fixture in a process of its own: V8's flags are process-wide. */
const growth = (mode: 'default' | 'limited'): Growth =>
  JSON.parse(
    execFileSync(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'fixtures', 'old-generation-growth.ts'), mode],
      {
        encoding: 'utf8',
      },
    ),
  ) as Growth;

describe('limitHeapGrowth', () => {
  it('keeps the old generation near what a full collection keeps, where V8 alone lets it grow several times over', () => {
    const byDefault = growth('default');
    const limited = growth('limited');
    // the same live set either way (~60 MB)
    expect(Math.abs(limited.kept - byDefault.kept)).toBeLessThan(byDefault.kept * 0.1);
    // measured here: V8 alone 295–339 MB, limited 136 MB, over ~62 MB kept
    expect(limited.largest).toBeLessThan(2.5 * limited.kept);
    expect(limited.largest).toBeLessThan(byDefault.largest);
  });

  it('refuses a growth that is not a whole, positive percentage', () => {
    expect(() => limitHeapGrowth(0)).toThrow('heap growth: 0 is not a whole percentage');
    expect(() => limitHeapGrowth(12.5)).toThrow(RangeError);
  });
});
