import Joi from 'joi';
import { DATE_TIME, errorResponse, type JsonSchema } from '@attest/common';
import { object, ref } from '../kernel/openapi';
import { address, chainField } from '../kernel/request-fields';
import type { AddressChallenge, ReceivingAddress } from './receiving-address-store';
import { MAX_OPEN_CHALLENGES } from './receiving-address-service';

/** The bodies, parameters, answers and schemas of the receiving-address routes (app API and admin API). */

/** An address added by an operator: the chain and the address. */
export const addressBody = Joi.object({
  chain: chainField,
  address: address('address').description('The address that receives payments: lower case or EIP-55'),
})
  .required()
  .messages({ 'any.required': 'The body must be a JSON object.', 'object.base': 'The body must be a JSON object.' });

/** A challenge asked for: the same fields. */
export const challengeBody = addressBody;

/** A proof: the challenge and the address's signature of its message. */
export const proofBody = Joi.object({
  challenge_id: Joi.string()
    .pattern(/^rac_[0-9a-f]{32}$/)
    .required()
    .description('The challenge_id of a challenge of this app, not used yet, not expired')
    .messages({ 'string.pattern.base': 'challenge_id must be rac_ followed by 32 hexadecimal digits' }),
  signature: Joi.string()
    .pattern(/^0x(?:[0-9a-fA-F]{2}){1,4096}$/)
    .required()
    .description(
      'The address’s signature of the challenge’s message: EIP-191 personal_sign (65 bytes) by an account, or what ' +
        'the contract’s EIP-1271 isValidSignature accepts for the message’s EIP-191 hash',
    )
    .messages({ 'string.pattern.base': 'signature must be 0x followed by an even number of hexadecimal digits' }),
})
  .required()
  .messages({ 'any.required': 'The body must be a JSON object.', 'object.base': 'The body must be a JSON object.' });

/** The `{chain}/{address}` of a path (the address lower case or EIP-55). */
export const addressParams = Joi.object({
  chain: chainField,
  address: address('address'),
});

export const addressView = (a: ReceivingAddress) => ({
  app_id: a.appId,
  chain: a.chain,
  address: a.address,
  proof: a.proof,
  created_at: a.createdAt.toISOString(),
});

export const challengeView = (c: AddressChallenge) => ({
  challenge_id: c.id,
  app_id: c.appId,
  chain: c.chain,
  address: c.address,
  message: c.message,
  expires_at: c.expiresAt.toISOString(),
});

const ADDRESS = { type: 'string', pattern: '^0x[0-9a-f]{40}$' } as const;

/** The schemas both documents hold. */
export const receivingAddressComponents: Record<string, JsonSchema> = {
  ReceivingAddress: object({
    app_id: { type: 'string' },
    chain: { type: 'string' },
    address: { ...ADDRESS, description: 'Lower case' },
    proof: {
      type: 'string',
      enum: ['operator', 'eip191', 'eip1271'],
      description: 'Added by an operator, or proven by a signature: EIP-191 by an account, EIP-1271 by a contract',
    },
    created_at: DATE_TIME,
  }),
  ReceivingAddressChallenge: object({
    challenge_id: { type: 'string', pattern: '^rac_[0-9a-f]{32}$' },
    app_id: { type: 'string' },
    chain: { type: 'string' },
    address: ADDRESS,
    message: {
      type: 'string',
      description:
        'The text to sign with the address (personal_sign), exactly as given; it names the app, chain and address',
    },
    expires_at: {
      ...DATE_TIME,
      description: 'Sign and send the proof before then (ten minutes); each challenge is used once',
    },
  }),
};

export const receivingAddressSchemas = {
  address: ref('ReceivingAddress'),
  challenge: ref('ReceivingAddressChallenge'),
};

/** The answer when an app has MAX_OPEN_CHALLENGES challenges open. */
export const tooManyChallengesDoc = errorResponse(
  `too_many_challenges: the app has ${MAX_OPEN_CHALLENGES} open challenges (neither used nor expired), the most it may have; prove an ` +
    `address with one, or ask again after Retry-After (seconds: when the first expires)`,
);
