import { Writable } from 'node:stream';
import winston from 'winston';
import { createLogger } from '../src';
import { FLUSH_INTERVAL_MS, requestLineWriter } from '../src/http/request-line';

function captured(level = 'info', transportLevel?: string) {
  const chunks: string[] = [];
  const writes = () => chunks.length;
  const logger = createLogger('transactions', level);
  logger.clear();
  const stream = new Writable({ write: (chunk, _enc, done) => (chunks.push(String(chunk)), done()) });
  logger.add(new winston.transports.Stream({ stream, level: transportLevel }));
  return { logger, writes, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

const fields = {
  request_id: 'r-1',
  method: 'GET',
  path: '/a "quoted" \\ päth/✓',
  status: 200,
  duration_ms: 0.30000000000000004,
};
const withoutTime = (line: string) => line.replace(/"timestamp":"[^"]+"/, '"timestamp":"T"');

describe('the pre-formatted request line', () => {
  it('is byte for byte what the logger itself writes for the same fields, timestamp aside', async () => {
    const { logger, lines } = captured();
    requestLineWriter(logger)(fields);
    logger.info('request', fields);
    await new Promise((r) => setImmediate(r));
    const [fast, slow] = lines();
    expect(withoutTime(fast)).toBe(withoutTime(slow));
    expect(JSON.parse(fast)).toEqual({
      ...fields,
      level: 'info',
      message: 'request',
      service: 'transactions',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('adds trace_id when tracing is on, still byte for byte what the logger writes', async () => {
    const { logger, lines } = captured();
    const traced = { ...fields, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' };
    requestLineWriter(logger)(traced);
    logger.info('request', traced);
    await new Promise((r) => setImmediate(r));
    const [fast, slow] = lines();
    expect(withoutTime(fast)).toBe(withoutTime(slow));
    expect(JSON.parse(fast)).toMatchObject({ request_id: 'r-1', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
  });

  it('respects the logger level, a transport level and silence', () => {
    for (const [level, transportLevel] of [
      ['warn', undefined],
      ['info', 'warn'],
      ['silent', undefined],
    ] as const) {
      const { logger, lines } = captured(level, transportLevel);
      requestLineWriter(logger)(fields);
      expect(lines()).toEqual([]);
    }
  });

  describe('batches under load (one synchronous write of standard output per batch)', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());
    const line = (i: number) => ({ ...fields, request_id: `r-${i}` });

    it('writes a quiet line in the next turn; lines soon after wait for the interval and go out together', () => {
      const { logger, writes, lines } = captured();
      const write = requestLineWriter(logger);
      write(line(1));
      expect(writes()).toBe(0);
      jest.advanceTimersToNextTimer(); // the next turn
      expect(writes()).toBe(1);
      jest.advanceTimersByTime(1);
      write(line(2));
      jest.advanceTimersByTime(2); // turns later, but within the interval: held
      write(line(3));
      expect(writes()).toBe(1);
      jest.advanceTimersByTime(FLUSH_INTERVAL_MS - 4);
      expect(writes()).toBe(1);
      jest.advanceTimersByTime(1);
      expect(writes()).toBe(2);
      expect(lines().map((l) => JSON.parse(l).request_id)).toEqual(['r-1', 'r-2', 'r-3']);
      // quiet again: the next line goes out in the next turn
      jest.advanceTimersByTime(FLUSH_INTERVAL_MS);
      write(line(4));
      jest.advanceTimersToNextTimer();
      expect(writes()).toBe(3);
    });

    it('writes a batch at once when it reaches 64 KB; loses none', () => {
      const { logger, writes, lines } = captured();
      const write = requestLineWriter(logger);
      write(line(0));
      jest.advanceTimersToNextTimer();
      let i = 1;
      while (writes() === 1) write(line(i++));
      expect(writes()).toBe(2);
      expect(lines().join('\n').length).toBeGreaterThanOrEqual(64 * 1024);
      write(line(i));
      jest.advanceTimersByTime(FLUSH_INTERVAL_MS);
      expect(lines().map((l) => JSON.parse(l).request_id)).toEqual(Array.from({ length: i + 1 }, (_, n) => `r-${n}`));
    });
  });
});
