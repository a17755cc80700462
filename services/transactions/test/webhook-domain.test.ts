import { Webhook } from 'standardwebhooks';
import {
  DEFAULT_RETRY_SCHEDULE,
  DISABLE_AFTER_MS,
  nextStep,
  parseRetrySchedule,
  retryAfterMs,
  throttleMs,
} from '../src/webhooks/webhook-schedule';
import { newWebhookSecret, webhookHeaders } from '../src/webhooks/webhook-signature';
import { endpointUrlProblem, isPrivateAddress, resolveTarget } from '../src/webhooks/webhook-targets';

const now = new Date('2026-03-01T12:00:00Z');

describe('webhook signatures', () => {
  const body = JSON.stringify({
    type: 'transaction.created',
    timestamp: now.toISOString(),
    data: { transaction_id: '0x1' },
  });

  it('are verified by the standardwebhooks package as sent', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = webhookHeaders([secret], 'msg_1', body);
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('carry one signature per secret during a rotation, each verifying on its own', () => {
    const [oldSecret, newSecret, other] = [newWebhookSecret(), newWebhookSecret(), newWebhookSecret()];
    const headers = webhookHeaders([newSecret, oldSecret], 'msg_2', body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(oldSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(newSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(other).verify(body, headers)).toThrow('No matching signature found');
    expect(() => new Webhook(newSecret).verify(`${body} `, headers)).toThrow('No matching signature found');
  });
});

describe('the retry schedule', () => {
  const schedule = [5, 300, 1800];

  // no jitter (random() = 0), so each delay is the schedule's
  const step = (outcome: Parameters<typeof nextStep>[0], attempt: number, failingSince: Date | null = null) =>
    nextStep(outcome, attempt, schedule, failingSince, now, () => 0);

  it('succeeds on 2xx, retries other failures by the schedule, then gives up', () => {
    expect(step({ statusCode: 204 }, 1)).toEqual({ kind: 'succeeded' });
    expect(step({ statusCode: 500 }, 1)).toEqual({ kind: 'retry', delayMs: 5000, throttle: false });
    expect(step({ statusCode: null }, 2)).toEqual({ kind: 'retry', delayMs: 300000, throttle: false });
    expect(step({ statusCode: 302 }, 3)).toEqual({ kind: 'retry', delayMs: 1800000, throttle: false });
    expect(step({ statusCode: 500 }, 4)).toEqual({ kind: 'give-up', throttle: false });
    expect(step({ statusCode: 429 }, 4)).toEqual({ kind: 'give-up', throttle: true });
  });

  it('adds up to 20 % of each delay at random (jitter), never less than the schedule', () => {
    expect(nextStep({ statusCode: 500 }, 1, schedule, null, now, () => 0.5)).toEqual({
      kind: 'retry',
      delayMs: 5500,
      throttle: false,
    });
    expect(nextStep({ statusCode: 500 }, 2, schedule, null, now, () => 0.999999)).toEqual({
      kind: 'retry',
      delayMs: 360000,
      throttle: false,
    });
    for (let i = 0; i < 50; i++) {
      const next = nextStep({ statusCode: 500 }, 3, schedule, null, now);
      expect(next.kind === 'retry' && next.delayMs >= 1800000 && next.delayMs <= 2160000).toBe(true);
    }
  });

  it('throttles on 429, 502, 503 and 504: honours Retry-After (never sooner than the schedule), not on other statuses', () => {
    expect(step({ statusCode: 429, retryAfter: '120' }, 1)).toEqual({ kind: 'retry', delayMs: 120000, throttle: true });
    expect(step({ statusCode: 503, retryAfter: '1' }, 2)).toEqual({ kind: 'retry', delayMs: 300000, throttle: true });
    expect(step({ statusCode: 503, retryAfter: 'Sun, 01 Mar 2026 13:00:00 GMT' }, 1)).toEqual({
      kind: 'retry',
      delayMs: 3600000,
      throttle: true,
    });
    expect(step({ statusCode: 502, retryAfter: '60' }, 1)).toEqual({ kind: 'retry', delayMs: 60000, throttle: true });
    expect(step({ statusCode: 504 }, 1)).toEqual({ kind: 'retry', delayMs: 5000, throttle: true });
    expect(step({ statusCode: 500, retryAfter: '120' }, 1)).toEqual({ kind: 'retry', delayMs: 5000, throttle: false });
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs('99999999', now)).toBe(24 * 3600 * 1000);
  });

  it('pauses the whole endpoint for Retry-After, else for the delivery’s next delay', () => {
    const throttled = { statusCode: 429, retryAfter: '120' };
    expect(throttleMs(throttled, step(throttled, 1), now)).toBe(120000);
    expect(throttleMs({ statusCode: 503 }, step({ statusCode: 503 }, 2), now)).toBe(300000);
    expect(throttleMs(throttled, step(throttled, 4), now)).toBe(120000);
    expect(throttleMs({ statusCode: 500 }, step({ statusCode: 500 }, 1), now)).toBeNull();
    expect(throttleMs({ statusCode: 200 }, step({ statusCode: 200 }, 1), now)).toBeNull();
  });

  it('disables on 410 and after 5 days of failures', () => {
    expect(nextStep({ statusCode: 410 }, 1, schedule, null, now)).toEqual({
      kind: 'disable',
      reason: 'the endpoint answered 410 Gone',
    });
    const longAgo = new Date(now.getTime() - DISABLE_AFTER_MS);
    expect(nextStep({ statusCode: 500 }, 1, schedule, longAgo, now)).toEqual({
      kind: 'disable',
      reason: 'the endpoint failed for 5 days',
    });
    expect(nextStep({ statusCode: 200 }, 1, schedule, longAgo, now)).toEqual({ kind: 'succeeded' });
    expect(step({ statusCode: 500 }, 1, new Date(now.getTime() - DISABLE_AFTER_MS + 1000)).kind).toBe('retry');
  });

  it('reads WEBHOOK_RETRY_SCHEDULE', () => {
    expect(parseRetrySchedule('0,0,1')).toEqual([0, 0, 1]);
    expect(parseRetrySchedule(DEFAULT_RETRY_SCHEDULE.join(', '))).toEqual(DEFAULT_RETRY_SCHEDULE);
    for (const bad of ['', '5,', '-1', '1.5', 'a,b']) expect(parseRetrySchedule(bad)).toBeNull();
  });
});

const EMBEDDED = { allowHttp: true, allowPrivate: true, allowPrivateSetting: 'WEBHOOK_ALLOW_PRIVATE' };
const PRODUCTION = { allowHttp: false, allowPrivate: false, allowPrivateSetting: 'WEBHOOK_ALLOW_PRIVATE' };

describe('webhook targets', () => {
  it('accept https anywhere; http only on loopback, and only in embedded mode', () => {
    expect(endpointUrlProblem('https://example.com/hooks', EMBEDDED)).toBeNull();
    expect(endpointUrlProblem('http://localhost:3000/hooks', EMBEDDED)).toBeNull();
    expect(endpointUrlProblem('http://127.0.0.1:3000/hooks', EMBEDDED)).toBeNull();
    expect(endpointUrlProblem('http://[::1]:3000/hooks', EMBEDDED)).toBeNull();
    expect(endpointUrlProblem('http://example.com/hooks', EMBEDDED)).toMatch(/^url must be https/);
    expect(endpointUrlProblem('http://localhost:3000/hooks', PRODUCTION)).toBe(
      'url must be https (plain http only in the embedded development mode).',
    );
    expect(endpointUrlProblem('https://example.com/hooks', PRODUCTION)).toBeNull();
    // an IP literal is judged at registration
    expect(endpointUrlProblem('https://[::127.0.0.1]/hooks', PRODUCTION)).toBe(
      'url must not point to a non-public address (::7f00:1); WEBHOOK_ALLOW_PRIVATE=true allows it.',
    );
    expect(endpointUrlProblem('https://10.1.2.3/hooks', PRODUCTION)).toMatch(
      /^url must not point to a non-public address/,
    );
    expect(endpointUrlProblem('https://10.1.2.3/hooks', { ...PRODUCTION, allowPrivate: true })).toBeNull();
    expect(endpointUrlProblem('ftp://example.com/', EMBEDDED)).toBe('url must be an https URL.');
    expect(endpointUrlProblem('not a url', EMBEDDED)).toBe('url must be an absolute https URL.');
    expect(endpointUrlProblem('https://user:pw@example.com/', EMBEDDED)).toBe(
      'url must not contain a user name or password.',
    );
  });

  it('classify private, loopback and link-local addresses, IPv4-mapped ones too', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:a9fe:a9fe',
      // IPv4-compatible (::/96), local-use NAT64, well-known NAT64 of a private address, 6to4, Teredo, discard
      '::127.0.0.1',
      '::7f00:1',
      '::a00:1',
      '64:ff9b:1::a00:1',
      '64:ff9b:1:ffff::1',
      '64:ff9b::10.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:0:0:0:0:7f00:1',
      // IPv4-translated (::ffff:0:0:0/96) of loopback and of a private address
      '::ffff:0:7f00:1',
      '::ffff:0:10.0.0.1',
      '2002:7f00:1::',
      '2002:808:808::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '100::',
      '100::1:2:3:4',
    ])
      expect([a, isPrivateAddress(a)]).toEqual([a, true]);
    for (const a of [
      '93.184.216.34',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '::ffff:1.1.1.1',
      '64:ff9b::1.1.1.1',
      '::ffff:0:1.1.1.1',
      '2001:4860::8888',
    ])
      expect([a, isPrivateAddress(a)]).toEqual([a, false]);
  });

  it('refuse a host when any address it resolves to is private, unless allowed; connect to the checked address', async () => {
    const rebinding = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ];
    await expect(resolveTarget(new URL('https://hooks.example/'), PRODUCTION, rebinding)).rejects.toThrow(
      'refused: hooks.example resolves to a non-public address (10.0.0.5)',
    );
    await expect(
      resolveTarget(new URL('https://hooks.example/'), { ...PRODUCTION, allowPrivate: true }, rebinding),
    ).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    await expect(resolveTarget(new URL('https://[::1]:80/'), PRODUCTION)).rejects.toThrow('non-public address (::1)');
    await expect(
      resolveTarget(new URL('https://public.example/'), PRODUCTION, async () => [{ address: '1.1.1.1', family: 4 }]),
    ).resolves.toEqual({ address: '1.1.1.1', family: 4 });
  });
});
