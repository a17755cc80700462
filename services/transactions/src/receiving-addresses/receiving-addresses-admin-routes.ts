import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminRoute,
  adminValidationResponse,
  errorResponse,
  jsonResponse,
  operatorActor,
  validate,
} from '@attest/common';
import { appIdOf } from '../kernel/admin-route';
import { appIdParams } from '../kernel/admin-params';
import {
  addressBody,
  addressParams,
  addressView,
  challengeBody,
  challengeView,
  proofBody,
  receivingAddressSchemas,
  tooManyChallengesDoc,
} from './receiving-address-fields';
import type { ReceivingAddressService } from './receiving-address-service';

export interface ReceivingAddressesAdminDeps {
  receivingAddresses: Pick<ReceivingAddressService, 'list' | 'addByOperator' | 'challenge' | 'prove' | 'remove'>;
}

const tags = ['receiving addresses'];
const BASE = '/apps/:app_id/receiving-addresses';
const oneParams = appIdParams.concat(addressParams);
const taken = errorResponse(
  'receiving_address_taken (attribute address): another app receives at this address on this chain',
);
const proofErrors =
  'challenge_id, signature; invalid_challenge (attribute challenge_id: unknown, another app’s, or used already), ' +
  'challenge_expired (challenge_id), invalid_signature (signature: not the address’s signature of the message)';

/**
 * An app's receiving addresses (issue 40, item 1) for operators, and for the portal on its owners' behalf:
 * list; add without proof (an operator's word, `pnpm manage receiving-address add`); ask for a challenge and
 * add with the address's signature of it; remove. Every change is in the audit trail with its operator.
 */
export function receivingAddressesAdminRoutes(router: Router, deps: ReceivingAddressesAdminDeps): void {
  const { receivingAddresses } = deps;

  adminRoute(
    router,
    'GET',
    BASE,
    {
      summary: 'An app’s receiving addresses, by chain then address',
      tags,
      params: appIdParams,
      query: Joi.object({ chain: Joi.string().trim().lowercase().max(50).description('Only this chain’s') }),
      responses: {
        200: jsonResponse('The addresses', { type: 'array', items: receivingAddressSchemas.address }),
        400: adminValidationResponse('app_id (app_ and 32 hexadecimal digits), chain'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      const { chain } = validate(Joi.object({ chain: Joi.string().trim().lowercase().max(50) }), req.query);
      res.json((await receivingAddresses.list(appId, chain as string | undefined)).map(addressView));
    },
  );

  adminRoute(
    router,
    'POST',
    BASE,
    {
      summary: 'Add a receiving address to an app, on the operator’s word (no signature)',
      description:
        'For addresses the app cannot sign for here (existing apps, custodial wallets). Idempotent: the app’s address ' +
        'again answers 200. One app per (chain, address). `pnpm manage receiving-address add` calls this.',
      tags,
      params: appIdParams,
      body: { contentType: 'application/json', schema: addressBody },
      responses: {
        201: jsonResponse('Added', receivingAddressSchemas.address),
        200: jsonResponse('The app held it already', receivingAddressSchemas.address),
        400: adminValidationResponse('app_id, chain (a chain of CHAIN_TOKENS), address'),
        409: taken,
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      const body = validate(addressBody, req.body);
      const { address, added } = await receivingAddresses.addByOperator(
        appId,
        body.chain as string,
        body.address as string,
        operatorActor(req, res),
      );
      res.status(added ? 201 : 200).json(addressView(address));
    },
  );

  adminRoute(
    router,
    'POST',
    `${BASE}/challenges`,
    {
      summary: 'A challenge for the app to sign with an address, proving it holds it',
      description:
        'Sign `message` with the address (personal_sign) and send the signature to …/receiving-addresses/proofs within ten minutes.',
      tags,
      params: appIdParams,
      body: { contentType: 'application/json', schema: challengeBody },
      responses: {
        201: jsonResponse('The challenge', receivingAddressSchemas.challenge),
        400: adminValidationResponse('app_id, chain (a chain of CHAIN_TOKENS), address'),
        409: taken,
        429: tooManyChallengesDoc,
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      const body = validate(challengeBody, req.body);
      const challenge = await receivingAddresses.challenge(appId, body.chain as string, body.address as string);
      res.status(201).json(challengeView(challenge));
    },
  );

  adminRoute(
    router,
    'POST',
    `${BASE}/proofs`,
    {
      summary: 'Add the address of one of the app’s challenges, with the address’s signature of it',
      description:
        'EIP-191 (personal_sign) by an account, or EIP-1271 by a contract (asked of the chain’s RPC). The challenge is used ' +
        'by this call whatever its outcome.',
      tags,
      params: appIdParams,
      body: { contentType: 'application/json', schema: proofBody },
      responses: {
        201: jsonResponse('Added', receivingAddressSchemas.address),
        200: jsonResponse('The app held it already', receivingAddressSchemas.address),
        400: adminValidationResponse(`app_id, ${proofErrors}`),
        409: taken,
        503: errorResponse('service_unavailable: the chain’s RPC did not answer (a contract’s signature); Retry-After'),
      },
    },
    async (req, res) => {
      const appId = appIdOf(req);
      const body = validate(proofBody, req.body);
      const { address, added } = await receivingAddresses.prove(
        appId,
        body.challenge_id as string,
        body.signature as string,
        operatorActor(req, res),
      );
      res.status(added ? 201 : 200).json(addressView(address));
    },
  );

  adminRoute(
    router,
    'DELETE',
    `${BASE}/:chain/:address`,
    {
      summary: 'Remove a receiving address from an app',
      description:
        'Its payments recorded already stay; from now on it records and asks for none at this address, and a transfer to ' +
        'it is matched to none of its payment requests.',
      tags,
      params: oneParams,
      responses: {
        200: jsonResponse('Removed', receivingAddressSchemas.address),
        400: adminValidationResponse('app_id, chain, address'),
        404: adminNotFoundResponse('the app does not receive at this address on this chain (attribute address)'),
      },
    },
    async (req, res) => {
      const p = validate(oneParams, {
        app_id: req.params.app_id,
        chain: req.params.chain,
        address: req.params.address,
      });
      const removed = await receivingAddresses.remove(
        p.app_id as string,
        p.chain as string,
        p.address as string,
        operatorActor(req, res),
      );
      res.json(addressView(removed));
    },
  );
}
