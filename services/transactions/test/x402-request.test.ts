import fc from 'fast-check';
import { AppError } from '@attest/common';
import { plainlyValid, x402Request } from '../src/x402/x402-request';
import { x402RequestSchema } from '../src/x402/x402.openapi';

// the x402 request body's quick check (x402-request.ts) takes a body only where Joi's schema takes it and returns
// it unchanged; everything else is Joi's, with its answers

const requirements = () => ({
  scheme: 'exact',
  network: 'eip155:480',
  asset: '0x79A02482A880bCE3F13e09Da970dC34db4CD24d1',
  amount: '1000000',
  payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  maxTimeoutSeconds: 60,
  extra: { name: 'Bridged USDC', version: '2' },
});
const validBody = () => ({
  x402Version: 2,
  paymentPayload: {
    x402Version: 2,
    resource: { url: 'https://shop.example/paid', description: 'a paid route' },
    accepted: requirements(),
    payload: {
      signature: `0x${'ab'.repeat(65)}`,
      authorization: { from: '0x857b06519E91e3A54538791bDbb0E22373e36b66', nonce: `0x${'01'.repeat(32)}` },
    },
    extensions: {},
  },
  paymentRequirements: requirements(),
});

/** Where a mutation lands: the body's fields and those of its nested objects. */
const PATHS = [
  [],
  ['x402Version'],
  ['extraTopLevel'],
  ['paymentPayload'],
  ['paymentPayload', 'x402Version'],
  ['paymentPayload', 'resource'],
  ['paymentPayload', 'resource', 'url'],
  ['paymentPayload', 'accepted'],
  ['paymentPayload', 'payload'],
  ['paymentPayload', 'extensions'],
  ...['accepted', 'requirements'].flatMap((side) =>
    ['scheme', 'network', 'asset', 'amount', 'payTo', 'maxTimeoutSeconds', 'extra', 'other'].map((field) =>
      side === 'accepted' ? ['paymentPayload', 'accepted', field] : ['paymentRequirements', field],
    ),
  ),
];

const DELETE = Symbol('delete');
const values = fc.oneof(
  fc.constant(DELETE),
  fc.constantFrom(0, -0, 1, -1, 2, 1.5, 2 ** 53, Number.MAX_SAFE_INTEGER, '2', '', ' ', null, true, [], {}, [1]),
  fc.constantFrom('eip155:480', 'eip155:8453', 'EIP155:480', 'e:1', 'x'.repeat(40), 'x'.repeat(41), 'x'.repeat(2001)),
  fc.string({ maxLength: 110 }),
  fc.integer(),
  fc.double(),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

describe('the x402 request body’s check', () => {
  it('takes a client library’s body as it is, without Joi', () => {
    const body = validBody();
    expect(plainlyValid(body)).toBe(true);
    expect(x402Request(body)).toBe(body);
    expect(x402RequestSchema.validate(body)).toEqual({ value: body });
  });

  it('takes only what Joi takes and would return unchanged; otherwise answers as Joi', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...PATHS), values), { minLength: 1, maxLength: 3 }),
        (mutations) => {
          let body: unknown = validBody();
          // one on the other, each where the path still leads through objects
          for (const [path, value] of mutations)
            body = path.length === 0 ? (value === DELETE ? undefined : value) : mergeInto(body, path, value);
          const joi = x402RequestSchema.validate(body);
          if (plainlyValid(body)) {
            expect(joi.error).toBeUndefined();
            expect(joi.value).toStrictEqual(body);
          }
          let ours: unknown;
          try {
            ours = x402Request(body);
          } catch (err) {
            expect(err).toBeInstanceOf(AppError);
            expect(joi.error).toBeDefined();
            return;
          }
          expect(joi.error).toBeUndefined();
          expect(ours).toStrictEqual(joi.value);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('still answers 400 naming the field, as Joi did', () => {
    const missing = validBody() as Partial<ReturnType<typeof validBody>>;
    delete missing.paymentRequirements;
    expect(() => x402Request(missing)).toThrow(
      expect.objectContaining({ code: 'required', attribute: 'paymentRequirements' }),
    );
    const network = { ...validBody(), paymentRequirements: { ...requirements(), network: 'base' } };
    expect(() => x402Request(network)).toThrow(
      expect.objectContaining({ code: 'invalid_parameter', attribute: 'paymentRequirements.network' }),
    );
    // a missing extra: Joi's default {} (the quick check leaves it to Joi)
    const noExtra = validBody() as { paymentRequirements: Partial<ReturnType<typeof requirements>> };
    delete noExtra.paymentRequirements.extra;
    expect(plainlyValid(noExtra)).toBe(false);
    expect((x402Request(noExtra) as { paymentRequirements: { extra: unknown } }).paymentRequirements.extra).toEqual({});
    // a version sent as text: Joi's conversion
    expect(x402Request({ ...validBody(), x402Version: '2' }).x402Version).toBe(2);
  });
});

/** `body` with `value` at `path` (or the field deleted), when the path still leads through objects. */
function mergeInto(body: unknown, path: string[], value: unknown): unknown {
  if (typeof body !== 'object' || body === null) return body;
  let at = body as Record<string, unknown>;
  for (const key of path.slice(0, -1)) {
    const next = at[key];
    if (typeof next !== 'object' || next === null) return body;
    at = next as Record<string, unknown>;
  }
  const last = path[path.length - 1];
  if (value === DELETE) delete at[last];
  else at[last] = value;
  return body;
}
