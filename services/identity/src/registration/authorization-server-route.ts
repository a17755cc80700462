import type { Router } from 'express';
import { endpoint } from '@attest/common';
import { discoveryMetadata } from '../oauth';
import type { KernelServices } from '../kernel/services';
import { prepareJson } from '../kernel/prepared-json';
import { sendPrepared } from '../kernel/send-prepared';
import { openCors } from '../kernel/http-steps';
import { authorizationServerDocs } from './authorization-server-route.openapi';

/** What /.well-known/oauth-authorization-server uses. */
export type AuthorizationServerRouteDeps = Pick<KernelServices, 'config'>;

/**
 * The RFC 8414 document: the OpenID discovery metadata as it is (one builder, so the two never differ in
 * issuer or endpoints), and what registration adds.
 */
export function authorizationServerMetadata(config: AuthorizationServerRouteDeps['config']): Record<string, unknown> {
  return {
    ...discoveryMetadata(config),
    ...(config.clientRegistration === 'off' ? {} : { registration_endpoint: `${config.issuer}/register` }),
    client_id_metadata_document_supported: config.CLIENT_ID_METADATA_DOCUMENTS,
  };
}

/** GET /.well-known/oauth-authorization-server (RFC 8414 §3; the issuer has no path, so no suffix). */
export function authorizationServerRoute(router: Router, ctx: AuthorizationServerRouteDeps): void {
  const document = prepareJson(authorizationServerMetadata(ctx.config));
  const cors = openCors('GET');
  endpoint(
    router,
    '/.well-known/oauth-authorization-server',
    {
      GET: [cors, (req, res) => sendPrepared(req, res, document, 'public, max-age=3600')],
      OPTIONS: [cors],
    },
    authorizationServerDocs,
    { fast: true },
  );
}
