import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { bodyErrorResponses, endpoint, errorResponse, jsonBody, jsonResponse, validate } from '@attest/common';
import { apiKeyAuthentication, appActor, verifiedKey, type ApiKeyAuthDeps } from '../kernel/api-keys/api-key-auth';
import { apiKeyResponses } from '../kernel/openapi';
import { requireJson } from '../kernel/request-fields';
import {
  addressParams,
  addressView,
  challengeBody,
  challengeView,
  proofBody,
  receivingAddressSchemas,
  tooManyChallengesDoc,
} from './receiving-address-fields';
import type { ReceivingAddressService } from './receiving-address-service';

export interface ReceivingAddressesRouteDeps extends ApiKeyAuthDeps {
  receivingAddresses: Pick<ReceivingAddressService, 'list' | 'challenge' | 'prove' | 'remove'>;
  bodyLimit: string;
}

const BASE = '/api/v2/client/receiving-addresses';
const tags = ['receiving addresses'];
const security = [{ apiKey: [] }];
const listQuery = Joi.object({ chain: Joi.string().trim().lowercase().max(50).description('Only this chain’s') });
const taken = errorResponse(
  'receiving_address_taken (attribute address): another app receives at this address on this chain',
);

const answer = (res: Response, status: number, value: unknown) =>
  res.status(status).set('Cache-Control', 'no-store').json(value);

/**
 * /api/v2/client/receiving-addresses (issue 40, item 1), with the app's API key (the key names the app): the
 * app's receiving addresses; a challenge to sign with an address; the proof that adds it; removing one. An
 * app records payments and creates payment requests only to its receiving addresses.
 */
export function receivingAddressesRoute(router: Router, deps: ReceivingAddressesRouteDeps): void {
  const { receivingAddresses } = deps;
  const auth = apiKeyAuthentication(deps);
  const body = [requireJson, jsonBody(deps.bodyLimit)];
  const appOf = (res: Response) => verifiedKey(res).appId;

  endpoint(
    router,
    BASE,
    {
      GET: [
        ...auth,
        async (req: Request, res: Response) => {
          const { chain } = validate(listQuery, req.query);
          answer(res, 200, (await receivingAddresses.list(appOf(res), chain as string | undefined)).map(addressView));
        },
      ],
      POST: [
        ...auth,
        ...body,
        async (req: Request, res: Response) => {
          const proof = validate(proofBody, req.body);
          const { address, added } = await receivingAddresses.prove(
            appOf(res),
            proof.challenge_id as string,
            proof.signature as string,
            appActor(req, res),
          );
          answer(res, added ? 201 : 200, addressView(address));
        },
      ],
    },
    {
      GET: {
        summary: 'Your app’s receiving addresses, by chain then address',
        tags,
        security,
        query: listQuery,
        responses: {
          200: jsonResponse('The addresses', { type: 'array', items: receivingAddressSchemas.address }),
          400: errorResponse('invalid_parameter (attribute chain)'),
          ...apiKeyResponses,
        },
      },
      POST: {
        summary: 'Add a receiving address you proved: the challenge and the address’s signature of its message',
        description:
          'Ask for a challenge first (POST …/receiving-addresses/challenges), sign its `message` with the address — ' +
          'personal_sign (EIP-191) by an account, or a signature the contract’s EIP-1271 isValidSignature accepts for ' +
          'the message’s EIP-191 hash — and send it here within ten minutes. A challenge is used by the first proof that ' +
          'names it, whatever its outcome. One app per (chain, address); yours again answers 200.',
        tags,
        security,
        body: { contentType: 'application/json', schema: proofBody },
        responses: {
          201: jsonResponse('Added', receivingAddressSchemas.address),
          200: jsonResponse('Your app held it already', receivingAddressSchemas.address),
          ...bodyErrorResponses(
            'required or invalid_parameter naming the field (challenge_id, signature); invalid_challenge (attribute ' +
              'challenge_id: unknown, another app’s, or used already); challenge_expired (challenge_id); invalid_signature ' +
              '(signature: not the address’s signature of the message)',
          ),
          ...apiKeyResponses,
          409: taken,
          503: errorResponse(
            'service_unavailable: the chain’s RPC did not answer (a contract’s signature); Retry-After',
          ),
        },
      },
    },
  );

  endpoint(
    router,
    `${BASE}/challenges`,
    {
      POST: [
        ...auth,
        ...body,
        async (req: Request, res: Response) => {
          const ask = validate(challengeBody, req.body);
          answer(
            res,
            201,
            challengeView(await receivingAddresses.challenge(appOf(res), ask.chain as string, ask.address as string)),
          );
        },
      ],
    },
    {
      POST: {
        summary: 'A challenge to sign with an address you receive payments at, to prove you hold it',
        description:
          'The message names your app, the chain and the address; it can be signed for ten minutes, once. Then POST the ' +
          'signature to /api/v2/client/receiving-addresses.',
        tags,
        security,
        body: { contentType: 'application/json', schema: challengeBody },
        responses: {
          201: jsonResponse('The challenge', receivingAddressSchemas.challenge),
          ...bodyErrorResponses(
            'required or invalid_parameter naming the field: chain (a chain of CHAIN_TOKENS), address',
          ),
          ...apiKeyResponses,
          409: taken,
          429: tooManyChallengesDoc,
        },
      },
    },
  );

  endpoint(
    router,
    `${BASE}/:chain/:address`,
    {
      DELETE: [
        ...auth,
        async (req: Request, res: Response) => {
          const p = validate(addressParams, { chain: req.params.chain, address: req.params.address });
          const removed = await receivingAddresses.remove(
            appOf(res),
            p.chain as string,
            p.address as string,
            appActor(req, res),
          );
          answer(res, 200, addressView(removed));
        },
      ],
    },
    {
      DELETE: {
        summary: 'Remove one of your receiving addresses',
        description:
          'Payments recorded already stay. From now on your app records and asks for none at this address, and a ' +
          'transfer to it that nobody recorded is matched to none of your payment requests.',
        tags,
        security,
        params: addressParams,
        responses: {
          200: jsonResponse('Removed', receivingAddressSchemas.address),
          400: errorResponse('invalid_parameter naming the parameter (chain, address)'),
          ...apiKeyResponses,
          404: errorResponse('not_found (attribute address): your app does not receive at this address on this chain'),
        },
      },
    },
  );
}
