import type { Router } from 'express';
import Joi from 'joi';
import {
  adminNotFoundResponse,
  adminValidationResponse,
  type AuditLog,
  DATE_TIME,
  documentAdminRoute,
  emptyResponse,
  errorResponse,
  errors,
  jsonResponse,
  type JsonSchema,
  operatorActor,
  validate,
} from '@attest/common';
import { hmacHex, randomHex } from '../kernel/crypto';
import type { KeyAlg } from '../kernel/key-store';
import type { VerificationLevel } from '../kernel/user-store';
import type { ConsentDirectory } from '../kernel/directories';
import type { Revocations } from '../kernel/revocations';
import type { ResourceDirectory } from './resource-directory';
import { resourceKey } from './resource-grants';
import type { Resource } from './resource-store';
import { createResourceSchema, updateResourceSchema } from './resource-schemas';

export const newResourceId = () => `res_${randomHex(16)}`;
export const RESOURCE_ID = /^res_[0-9a-f]{32}$/;
const newResourceSecret = () => `rs_${randomHex(24)}`;

/** Resource secrets have 192 random bits: a keyed hash is the right store (as client secrets). */
export const hashResourceSecret = (serverSecret: string, secret: string) =>
  hmacHex(serverSecret, `resource-secret:${secret}`);

const PROPERTIES: Record<string, JsonSchema> = {
  resource_id: { type: 'string', pattern: '^res_[0-9a-f]{32}$', description: 'Its user name at /introspect' },
  uri: { type: 'string', description: 'The `resource` clients ask for; the `aud` of its tokens' },
  name: { type: 'string' },
  scopes: { type: 'array', items: { type: 'string' } },
  min_verification_level: { enum: ['orb', 'device', null] },
  machine_clients: {
    type: 'array',
    items: { type: 'string' },
    description: 'The apps that may get a token for it as themselves (grant_type=client_credentials); no other app may',
  },
  access_token_alg: {
    enum: ['RS256', 'PS256', 'ES256'],
    description:
      'RFC 9068 §2.1: what its access tokens are signed with; RS256 (the default) keeps the app’s own (a FAPI 2 app’s PS256 or ES256)',
  },
  created_at: DATE_TIME,
  updated_at: DATE_TIME,
};
const object = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  required,
  additionalProperties: false,
  properties,
});

/** The admin document's schemas of resources. */
export const resourceSchemas: Record<string, JsonSchema> = {
  Resource: object(PROPERTIES),
  ResourceWithSecret: object({
    ...PROPERTIES,
    introspection_secret: {
      type: 'string',
      description: 'Shown once: the resource server’s password at /introspect (HTTP Basic, with resource_id)',
    },
  }),
};
const resourceSchema: JsonSchema = { $ref: '#/components/schemas/Resource' };
const withSecretSchema: JsonSchema = { $ref: '#/components/schemas/ResourceWithSecret' };

export const resourceJson = (r: Resource) => ({
  resource_id: r.id,
  uri: r.uri,
  name: r.name,
  scopes: r.scopes,
  min_verification_level: r.minVerificationLevel,
  machine_clients: r.machineClients,
  access_token_alg: r.accessTokenAlg,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
});

/** What the resources' admin API uses. */
export interface ResourceAdminDeps {
  config: { secret: string; ACCESS_TOKEN_TTL_SECONDS: number; TOKEN_EXCHANGE_TTL_SECONDS: number };
  /** A resource deleted: its uri's tokens issued so far stop working (resourceKey), for as long as any lasts. */
  revocations: Pick<Revocations, 'revokeBefore' | 'pastRevocationOf'>;
  now: () => number;
  audit: Pick<AuditLog, 'record'>;
  /** A resource deleted: the people's consents to it are removed. */
  consents: Pick<ConsentDirectory, 'removeResource'>;
  resources: Pick<ResourceDirectory, 'find' | 'list' | 'insert' | 'update' | 'setSecretHash' | 'remove'>;
}

const levelOf = (value: string | null | undefined): VerificationLevel | null | undefined =>
  value === undefined ? undefined : value === null || value === 'none' ? null : (value as VerificationLevel);
const noResource = () => errors.notFound('No resource with this resource_id.', 'resource_id');
const params = Joi.object({ id: Joi.string().description('The resource_id (res_ and 32 hexadecimal digits)') });
const notFound = adminNotFoundResponse('no resource with this resource_id (attribute resource_id)');
const tags = ['resources'];

/** Resources (issue 41): create, list, show, update, rotate the introspection secret, delete; each change audited. */
export function resourceAdminRoutes(router: Router, deps: ResourceAdminDeps): void {
  documentAdminRoute(router, 'POST', '/resources', {
    summary: 'Register a resource (an API that accepts Attest’s access tokens, e.g. an MCP server)',
    description:
      'Clients ask for a token for it with RFC 8707’s `resource` parameter (its uri); the token is a JWT (RFC 9068) ' +
      'whose aud is the uri, carrying only scopes it offers. The introspection_secret is in this answer only.',
    tags,
    body: { contentType: 'application/json', schema: createResourceSchema },
    responses: {
      201: jsonResponse('The resource, with its introspection secret', withSecretSchema),
      400: adminValidationResponse('uri, name, scopes, min_verification_level, machine_clients or access_token_alg'),
      409: errorResponse('resource_exists: a resource with this uri is registered (attribute uri)'),
    },
  });
  router.post('/resources', async (req, res) => {
    const body = validate(createResourceSchema, req.body) as {
      uri: string;
      name: string;
      scopes: string[];
      min_verification_level?: string | null;
      machine_clients: string[];
      access_token_alg: KeyAlg;
    };
    const secret = newResourceSecret();
    // registered again in the second its uri's resource was deleted: its tokens must not count as issued before
    await deps.revocations.pastRevocationOf(resourceKey(body.uri), deps.now);
    const resource = await deps.resources.insert({
      id: newResourceId(),
      uri: body.uri,
      name: body.name,
      scopes: body.scopes,
      minVerificationLevel: levelOf(body.min_verification_level) ?? null,
      machineClients: body.machine_clients,
      accessTokenAlg: body.access_token_alg,
      secretHash: hashResourceSecret(deps.config.secret, secret),
    });
    if (!resource) throw errors.conflict('resource_exists', 'A resource with this uri is registered.', 'uri');
    await deps.audit.record({
      type: 'resource.created',
      actor: operatorActor(req, res),
      subject: resource.id,
      detail: {
        uri: resource.uri,
        name: resource.name,
        scopes: resource.scopes,
        machine_clients: resource.machineClients,
        access_token_alg: resource.accessTokenAlg,
      },
    });
    res.status(201).json({ ...resourceJson(resource), introspection_secret: secret });
  });

  documentAdminRoute(router, 'GET', '/resources', {
    summary: 'Every registered resource, by uri (never a secret)',
    tags,
    responses: { 200: jsonResponse('The resources', { type: 'array', items: resourceSchema }) },
  });
  router.get('/resources', async (_req, res) => {
    res.json((await deps.resources.list()).map(resourceJson));
  });

  documentAdminRoute(router, 'GET', '/resources/:id', {
    summary: 'One resource',
    tags,
    params,
    responses: { 200: jsonResponse('The resource', resourceSchema), 404: notFound },
  });
  router.get('/resources/:id', async (req, res) => {
    const resource = RESOURCE_ID.test(req.params.id) ? await deps.resources.find(req.params.id) : null;
    if (!resource) throw noResource();
    res.json(resourceJson(resource));
  });

  documentAdminRoute(router, 'PATCH', '/resources/:id', {
    summary:
      'Change a resource’s name, scopes, minimum verification level, machine clients or access tokens’ signing algorithm (its uri stays)',
    description: 'Tokens already issued keep their scopes until they expire; new ones follow the change.',
    tags,
    params,
    body: { contentType: 'application/json', schema: updateResourceSchema },
    responses: {
      200: jsonResponse('The resource', resourceSchema),
      400: adminValidationResponse('name, scopes, min_verification_level, machine_clients or access_token_alg'),
      404: notFound,
    },
  });
  router.patch('/resources/:id', async (req, res) => {
    const body = validate(updateResourceSchema, req.body) as {
      name?: string;
      scopes?: string[];
      min_verification_level?: string | null;
      machine_clients?: string[];
      access_token_alg?: KeyAlg;
    };
    if (!RESOURCE_ID.test(req.params.id)) throw noResource();
    const resource = await deps.resources.update(req.params.id, {
      name: body.name,
      scopes: body.scopes,
      minVerificationLevel: levelOf(body.min_verification_level),
      machineClients: body.machine_clients,
      accessTokenAlg: body.access_token_alg,
    });
    if (!resource) throw noResource();
    await deps.audit.record({
      type: 'resource.updated',
      actor: operatorActor(req, res),
      subject: resource.id,
      detail: { uri: resource.uri, changed: Object.keys(body) },
    });
    res.json(resourceJson(resource));
  });

  documentAdminRoute(router, 'POST', '/resources/:id/rotate-secret', {
    summary: 'A new introspection secret for the resource server (the old one stops working at once)',
    tags,
    params,
    responses: {
      200: jsonResponse('The resource, with its new introspection secret', withSecretSchema),
      404: notFound,
    },
  });
  router.post('/resources/:id/rotate-secret', async (req, res) => {
    const secret = newResourceSecret();
    const resource = RESOURCE_ID.test(req.params.id)
      ? await deps.resources.setSecretHash(req.params.id, hashResourceSecret(deps.config.secret, secret))
      : null;
    if (!resource) throw noResource();
    await deps.audit.record({
      type: 'resource.secret_rotated',
      actor: operatorActor(req, res),
      subject: resource.id,
      detail: { uri: resource.uri },
    });
    res.json({ ...resourceJson(resource), introspection_secret: secret });
  });

  documentAdminRoute(router, 'DELETE', '/resources/:id', {
    summary: 'Delete a resource: no new tokens for it, and its server can no longer introspect',
    description:
      "Its tokens and refresh tokens stop working for good and people's consents to it are removed: a resource registered again with the same uri is another, " +
      'and takes none of them.',
    tags,
    params,
    responses: { 204: emptyResponse('Deleted'), 404: notFound },
  });
  router.delete('/resources/:id', async (req, res) => {
    const resource = RESOURCE_ID.test(req.params.id) ? await deps.resources.remove(req.params.id) : null;
    if (!resource) throw noResource();
    // a security review: the tokens of its uri issued so far are not a resource's registered again with it
    // (its refresh tokens are refused by its id, refreshGrantHolds); until the longest access token expires
    const now = deps.now();
    const longest = Math.max(deps.config.ACCESS_TOKEN_TTL_SECONDS, deps.config.TOKEN_EXCHANGE_TTL_SECONDS);
    await deps.revocations.revokeBefore(resourceKey(resource.uri), new Date(now), new Date(now + longest * 1000));
    // nor does a person's consent to it carry over to one registered again with its uri
    await deps.consents.removeResource(resource.uri);
    await deps.audit.record({
      type: 'resource.deleted',
      actor: operatorActor(req, res),
      subject: resource.id,
      detail: { uri: resource.uri },
    });
    res.status(204).end();
  });
}
