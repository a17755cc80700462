import { WorkerLoop } from '../src/worker-loop';
import { testLogger } from './support';

const tick = () => new Promise((r) => setImmediate(r));

describe('WorkerLoop', () => {
  it('runs a pass at start, again at once while passes report more, and on wake()', async () => {
    const results = [true, true, false];
    let passes = 0;
    const loop = new WorkerLoop({
      name: 'test',
      intervalMs: 60000,
      logger: testLogger,
      pass: async () => (passes++, results.shift() ?? false),
    });
    loop.start();
    while (passes < 3) await tick();
    for (let i = 0; i < 20; i++) await tick();
    expect(passes).toBe(3);
    loop.wake();
    while (passes < 4) await tick();
    await loop.stop();
    loop.wake();
    for (let i = 0; i < 20; i++) await tick();
    expect(passes).toBe(4);
  });

  it('stop() waits for the pass in flight; a failed pass is logged and does not stop the loop', async () => {
    let release!: () => void;
    let calls = 0;
    const loop = new WorkerLoop({
      name: 'test',
      intervalMs: 60000,
      failureBackoffMs: 0,
      logger: testLogger,
      pass: async () => {
        calls++;
        if (calls === 1) throw new Error('database away');
        await new Promise<void>((r) => (release = r));
        return false;
      },
    });
    loop.start();
    while (calls < 2) await tick();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    for (let i = 0; i < 20; i++) await tick();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(stopped).toBe(true);
    expect(calls).toBe(2);
  });
});
