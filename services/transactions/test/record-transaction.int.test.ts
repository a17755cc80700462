import request from 'supertest';
import { DEFAULT_CHAIN_TOKENS_JSON } from '../src/kernel/chain-tokens';
import {
  apiKeyFor,
  lookupTransaction,
  newAppId,
  postTransaction,
  receiveAt,
  transactionsHarness,
  type TransactionsHarness,
} from './support';

const FROM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'; // EIP-55 checksummed
const TO = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359';
/** A transaction hash of its own for each order: one on-chain transaction pays one recorded payment. */
const hashOf = (order: number) => `0x${order.toString(16).padStart(4, '0')}${'1f'.repeat(30)}`;

describe('POST /api/v2/client/transaction', () => {
  let h: TransactionsHarness;
  const appId = newAppId();
  const otherApp = newAppId();
  let key: { api_key: string; key_id: string };
  let otherKey: { api_key: string; key_id: string };
  let orders = 0;
  const body = (extra: Record<string, unknown> = {}) => ({
    app_id: appId,
    type: 'pay',
    reference: `order-${++orders}`,
    transaction_hash: hashOf(orders),
    chain: 'worldchain',
    token: 'USDCE',
    to: TO,
    token_amount: '1500000',
    from: FROM,
    ...extra,
  });

  beforeAll(async () => {
    const tokens = {
      ...JSON.parse(DEFAULT_CHAIN_TOKENS_JSON),
      testchain: { CENT: { address: '0x00000000000000000000000000000000000000c2', decimals: 2 } },
    };
    h = await transactionsHarness({ CHAIN_TOKENS: JSON.stringify(tokens), TRUST_PROXY: 'loopback' });
    key = await apiKeyFor(h, appId);
    otherKey = await apiKeyFor(h, otherApp);
    // the app receives at TO (and FROM, for the record whose `to` differs) on both chains it records in
    await receiveAt(h, appId, TO);
    await receiveAt(h, appId, FROM);
    await receiveAt(h, appId, TO, 'testchain');
  });
  afterAll(() => h.close());

  const stored = (reference: string) =>
    h.storage.db.query<{ id: string; status: string; token_amount: string }>(
      'SELECT id, status, token_amount FROM transactions WHERE app_id = $1 AND reference = $2',
      [appId, reference],
    );

  it('records a payment as pending: 201 with its transaction_id and the SPEC 2.5 fields', async () => {
    const sent = body({ reference: 'order-a', token: 'usdce' });
    const res = await postTransaction(h, key.api_key, sent);
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      transaction_id: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      reference: 'order-a',
      transaction_hash: sent.transaction_hash,
      transaction_status: 'pending',
      from: FROM,
      chain: 'worldchain',
      timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      token_amount: '1500000',
      token: 'USDCE',
      to: TO,
      app_id: appId,
    });
    expect(await stored('order-a')).toEqual([
      { id: res.body.transaction_id, status: 'pending', token_amount: '1500000' },
    ]);
    const { transaction_id, ...spec } = res.body;
    const lookup = await lookupTransaction(h, key.api_key, transaction_id, appId);
    expect(lookup.status).toBe(200);
    expect(lookup.body).toEqual(spec);
    expect(lookup.headers['transaction-status-reason']).toBeUndefined();
    const detail = await h.admin('get', `/transactions/${transaction_id}`);
    expect(detail.body.history).toEqual([
      {
        from_status: null,
        to_status: 'pending',
        source: `api:${key.key_id}`,
        reason: null,
        reason_detail: null,
        changed_at: expect.any(String),
      },
    ]);
  });

  it('is idempotent: the same record again answers 200 with the same transaction; addresses in any case are the same', async () => {
    const sent = body({ reference: 'order-b' });
    const first = await postTransaction(h, key.api_key, sent);
    expect(first.status).toBe(201);
    const again = await postTransaction(h, key.api_key, {
      ...sent,
      from: FROM.toLowerCase(),
      transaction_hash: sent.transaction_hash.toUpperCase().replace('0X', '0x'),
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await stored('order-b')).toHaveLength(1);
  });

  it('concurrent identical records make one transaction', async () => {
    const sent = body({ reference: 'order-c' });
    const answers = await Promise.all([1, 2, 3, 4].map(() => postTransaction(h, key.api_key, sent)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 201]);
    expect(new Set(answers.map((r) => r.body.transaction_id)).size).toBe(1);
    expect(await stored('order-c')).toHaveLength(1);
  });

  it.each([
    ['token_amount', '1400000'],
    ['to', FROM],
    ['token', 'WLD'],
    ['transaction_hash', `0x${'2e'.repeat(32)}`],
    ['type', 'sendTransaction'],
  ])(
    'the same reference with a different %s → 409 reference_taken naming it; the stored one is unchanged',
    async (field, value) => {
      const sent = body();
      expect((await postTransaction(h, key.api_key, sent)).status).toBe(201);
      const res = await postTransaction(h, key.api_key, { ...sent, [field]: value });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        code: 'reference_taken',
        detail: `This app already recorded reference "${sent.reference}" with a different ${field}; use a new reference for a new payment.`,
        attribute: field,
      });
      expect(await stored(sent.reference)).toEqual([expect.objectContaining({ token_amount: '1500000' })]);
    },
  );

  // app_id is optional since issue 44 (item 4): the key names the app, as on POST /api/v2/client/payment-requests
  it.each(['type', 'reference', 'transaction_hash', 'chain', 'token', 'to', 'token_amount', 'from'])(
    '400 required when %s is missing',
    async (field) => {
      const sent: Record<string, unknown> = body();
      delete sent[field];
      const res = await postTransaction(h, key.api_key, sent);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 'required', detail: 'This attribute is required.', attribute: field });
      expect(await stored(sent.reference as string)).toEqual([]);
    },
  );

  it.each([
    ['app_id', 'my-app', 'app_id must be app_ followed by 32 hexadecimal digits'],
    ['type', 'refund', 'type must be pay or sendTransaction'],
    ['reference', 'x'.repeat(201), 'reference length must be less than or equal to 200 characters long'],
    ['transaction_hash', '0x1234', 'transaction_hash must be 0x followed by 64 hexadecimal digits'],
    ['chain', 'solana', 'chain must be one of: worldchain, testchain.'],
    ['token', 'DOGE', 'token must be one of USDCE, WLD, ETH on worldchain.'],
    ['to', '0x123', 'to must be an address: 0x followed by 40 hexadecimal digits'],
    [
      'from',
      '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      'from has mixed case but not a valid EIP-55 checksum; send it all lower case or correctly checksummed',
    ],
    [
      'token_amount',
      '1.5',
      'token_amount must be an integer string (the amount times 10^6), with no sign, decimal point or exponent',
    ],
    [
      'token_amount',
      '-1',
      'token_amount must be an integer string (the amount times 10^6), with no sign, decimal point or exponent',
    ],
    ['token_amount', 1500000, 'token_amount must be a string'],
  ])('400 invalid_parameter naming %s (%p)', async (field, value, detail) => {
    const sent = body({ [field]: value });
    const res = await postTransaction(h, key.api_key, sent);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'invalid_parameter', detail, attribute: field });
  });

  it('refuses an amount finer than the token can carry, unknown fields, and bodies that are not JSON objects', async () => {
    const cents = await postTransaction(
      h,
      key.api_key,
      body({ chain: 'testchain', token: 'CENT', token_amount: '1015000' }),
    );
    expect(cents.body).toEqual({
      code: 'invalid_parameter',
      detail: "token_amount is finer than CENT's 2 decimals allow.",
      attribute: 'token_amount',
    });
    expect(
      (await postTransaction(h, key.api_key, body({ chain: 'testchain', token: 'CENT', token_amount: '1010000' })))
        .status,
    ).toBe(201);
    const extra = await postTransaction(h, key.api_key, body({ status: 'mined' }));
    expect(extra.body).toEqual({ code: 'invalid_parameter', detail: 'status is not allowed', attribute: 'status' });
    const list = await postTransaction(h, key.api_key, [body()] as unknown as Record<string, unknown>);
    expect(list.status).toBe(400);
    expect(list.body.code).toBe('invalid_parameter');
    const text = await request(h.publicApp)
      .post('/api/v2/client/transaction')
      .set('Authorization', `Bearer ${key.api_key}`)
      .set('Content-Type', 'text/plain')
      .send('app_id=x');
    expect(text.status).toBe(400);
    expect(text.body).toEqual({
      code: 'invalid_content_type',
      detail: 'Invalid content type. Only application/json is supported.',
      attribute: null,
    });
    const get = await request(h.publicApp).get('/api/v2/client/transaction');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
  });

  it('403 invalid_app when the key belongs to another app, as the lookup answers; nothing is stored', async () => {
    const sent = body();
    const res = await postTransaction(h, otherKey.api_key, sent);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      code: 'invalid_app',
      detail: 'This API key does not belong to app_id.',
      attribute: 'app_id',
    });
    expect(await stored(sent.reference)).toEqual([]);
  });

  it('403 receiving_address_not_registered when `to` is not one of the app’s addresses on the chain; nothing is stored', async () => {
    const stranger = `0x${'5e'.repeat(20)}`;
    for (const sent of [
      body({ to: stranger }),
      body({ chain: 'testchain', token: 'CENT', to: FROM, token_amount: '1010000' }),
    ]) {
      const res = await postTransaction(h, key.api_key, sent);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        code: 'receiving_address_not_registered',
        detail: expect.stringContaining(
          `to (${sent.to}) is not one of this app's receiving addresses on ${sent.chain}`,
        ),
        attribute: 'to',
      });
      expect(await stored(sent.reference)).toEqual([]);
    }
  });

  it('401 without a key or with an unknown one, before reading the body', async () => {
    const none = await request(h.publicApp).post('/api/v2/client/transaction').send(body());
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(none.body).toMatchObject({ code: 'unauthenticated', attribute: null });
    const unknown = await postTransaction(
      h,
      `api_${Buffer.from(`key_${'0'.repeat(32)}:sk_${'0'.repeat(48)}`).toString('base64url')}`,
      { not: 'read' },
    );
    expect(unknown.status).toBe(401);
    expect(unknown.body.code).toBe('unauthenticated');
    expect(unknown.headers.ratelimit).toMatch(/"per-id-and-address";r=\d+;t=\d+/);
  });

  it('wrong secrets for a key count against the same limits as lookups: past them even the right key gets 429', async () => {
    const forged = `api_${Buffer.from(`${key.key_id}:sk_${'9'.repeat(48)}`).toString('base64url')}`;
    const from = (req: request.Test) => req.set('X-Forwarded-For', '198.51.100.7');
    for (let i = 0; i < 5; i++) {
      expect(
        (
          await from(
            request(h.publicApp)
              .get(`/api/v2/client/transaction/0x${'0'.repeat(64)}`)
              .query({ app_id: appId, type: 'pay' })
              .set('Authorization', `Bearer ${forged}`),
          )
        ).status,
      ).toBe(401);
      expect(
        (
          await from(
            request(h.publicApp)
              .post('/api/v2/client/transaction')
              .set('Authorization', `Bearer ${forged}`)
              .send(body()),
          )
        ).status,
      ).toBe(401);
    }
    const sent = body();
    const blocked = await from(
      request(h.publicApp).post('/api/v2/client/transaction').set('Authorization', `Bearer ${key.api_key}`).send(sent),
    );
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('too_many_requests');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(await stored(sent.reference)).toEqual([]);
    // another address is not blocked
    expect(
      (
        await request(h.publicApp)
          .post('/api/v2/client/transaction')
          .set('X-Forwarded-For', '198.51.100.8')
          .set('Authorization', `Bearer ${key.api_key}`)
          .send(sent)
      ).status,
    ).toBe(201);
  });
});
