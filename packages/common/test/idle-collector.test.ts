import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { idleCollector, type IdleSample } from '../src';

const MB = 1024 * 1024;
const run = promisify(execFile);

describe('idleCollector', () => {
  function collector(samples: IdleSample[]) {
    const collected: number[] = [];
    let i = 0;
    const check = idleCollector({
      collect: () => collected.push(i),
      sample: () => samples[i++],
      quietIntervals: 2,
      retryIntervals: 2,
    });
    return { check, collected };
  }

  const busy = (mb: number) => ({ utilization: 0.6, youngGenerationBytes: mb * MB });
  const quiet = (mb: number) => ({ utilization: 0.001, youngGenerationBytes: mb * MB });
  const checks = (check: () => boolean, n: number) => Array.from({ length: n }, () => check());

  it('collects once a spell of intervals has been quiet, when the young generation has grown', () => {
    const { check, collected } = collector([busy(32), quiet(32), quiet(32), quiet(2), quiet(2), quiet(2)]);
    expect(checks(check, 6)).toEqual([false, false, true, false, false, false]);
    expect(collected).toEqual([3]);
  });

  it('leaves a small young generation alone', () => {
    const { check, collected } = collector([quiet(2), quiet(2), quiet(2)]);
    expect(checks(check, 3)).toEqual([false, false, false]);
    expect(collected).toEqual([]);
  });

  it('is not kept from collecting by one short burst of work in a quiet spell', () => {
    // the spell's mean, (0.09 + 0.001) / 2, is quiet
    const { check, collected } = collector([busy(32), quiet(32), { utilization: 0.09, youngGenerationBytes: 32 * MB }]);
    expect(checks(check, 3)).toEqual([false, false, true]);
    expect(collected).toEqual([3]);
  });

  it('collects again while V8 keeps the young generation grown, three times at most, then not until busy again', () => {
    const { check, collected } = collector([
      quiet(32),
      quiet(32), // collects
      quiet(32), // kept: waits
      quiet(32), // collects again
      quiet(32),
      quiet(32), // and a third time
      quiet(32),
      quiet(32), // no fourth
      busy(32),
      busy(32), // the spell's mean is busy
      quiet(32),
      quiet(32), // a new quiet spell: collects
    ]);
    expect(checks(check, 12)).toEqual([false, true, false, true, false, true, false, false, false, false, false, true]);
    expect(collected).toEqual([2, 4, 6, 12]);
  });

  it('stops collecting in a spell once the young generation is small', () => {
    const { check, collected } = collector([quiet(32), quiet(32), quiet(32), quiet(2), quiet(2), quiet(2)]);
    expect(checks(check, 6)).toEqual([false, true, false, false, false, false]);
    expect(collected).toEqual([2]);
  });

  it('never collects while busy', () => {
    const { check, collected } = collector([
      busy(32),
      busy(32),
      busy(32),
      { utilization: 0.05, youngGenerationBytes: 32 * MB },
    ]);
    expect(checks(check, 4)).toEqual([false, false, false, false]);
    expect(collected).toEqual([]);
  });
});

describe('collectWhenIdle', () => {
  it('gives back a grown young generation once the process has been quiet', async () => {
    const fixture = path.join(__dirname, 'fixtures', 'idle-young-generation.ts');
    const { stdout } = await run(process.execPath, ['--import', 'tsx', fixture], { cwd: __dirname, timeout: 50000 });
    const { grown, after } = JSON.parse(stdout.trim()) as { grown: number; after: number };
    expect(grown).toBeGreaterThan(4 * MB);
    expect(after).toBeLessThanOrEqual(4 * MB);
  }, 60000);
});
