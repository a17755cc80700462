import type { Queryable } from '@attest/common';
import type { KeyAlg } from '../kernel/key-store';
import type { VerificationLevel } from '../kernel/user-store';

/** An API that accepts Attest's access tokens (017_resources.sql): a token for it has its uri as `aud`. */
export interface Resource {
  id: string;
  uri: string;
  name: string;
  /** The scopes it offers: a token for it carries only these. */
  scopes: string[];
  minVerificationLevel: VerificationLevel | null;
  /** The apps that may get a token for it as themselves (grant_type=client_credentials), by client id. */
  machineClients: string[];
  /**
   * RFC 9068 §2.1: what its access tokens are signed with (028_resource_access_token_alg.sql). RS256, the
   * default, keeps the app's own algorithm (a FAPI 2 app's PS256 or ES256); PS256 or ES256 signs every token for it.
   */
  accessTokenAlg: KeyAlg;
  /** The keyed hash of its introspection secret. */
  secretHash: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface ResourceUpdate {
  name?: string;
  scopes?: string[];
  minVerificationLevel?: VerificationLevel | null;
  machineClients?: string[];
  accessTokenAlg?: KeyAlg;
}

interface ResourceRow {
  id: string;
  uri: string;
  name: string;
  scopes: string[];
  min_verification_level: VerificationLevel | null;
  machine_clients: string[];
  access_token_alg: KeyAlg;
  secret_hash: string;
  created_at: Date;
  updated_at: Date;
}

const toResource = (r: ResourceRow): Resource => ({
  id: r.id,
  uri: r.uri,
  name: r.name,
  scopes: r.scopes,
  minVerificationLevel: r.min_verification_level,
  machineClients: r.machine_clients,
  accessTokenAlg: r.access_token_alg,
  secretHash: r.secret_hash,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** resources: the registered resource servers. */
export function resourceStore(db: Queryable) {
  return {
    /** Null when a resource with this uri exists already. */
    async insert(r: Omit<Resource, 'createdAt' | 'updatedAt'>): Promise<Resource | null> {
      const [row] = await db.query<ResourceRow>(
        `INSERT INTO resources (id, uri, name, scopes, min_verification_level, machine_clients, access_token_alg, secret_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (uri) DO NOTHING RETURNING *`,
        [r.id, r.uri, r.name, r.scopes, r.minVerificationLevel, r.machineClients, r.accessTokenAlg, r.secretHash],
      );
      return row ? toResource(row) : null;
    },
    async find(id: string): Promise<Resource | null> {
      const [row] = await db.query<ResourceRow>('SELECT * FROM resources WHERE id = $1', [id]);
      return row ? toResource(row) : null;
    },
    async findByUri(uri: string): Promise<Resource | null> {
      const [row] = await db.query<ResourceRow>('SELECT * FROM resources WHERE uri = $1', [uri]);
      return row ? toResource(row) : null;
    },
    /** Every resource, by uri (an operator registers a handful). */
    async list(): Promise<Resource[]> {
      return (await db.query<ResourceRow>('SELECT * FROM resources ORDER BY uri')).map(toResource);
    },
    async update(id: string, changes: ResourceUpdate): Promise<Resource | null> {
      const [row] = await db.query<ResourceRow>(
        `UPDATE resources SET
           name = coalesce($2, name),
           scopes = coalesce($3, scopes),
           min_verification_level = CASE WHEN $4 THEN $5 ELSE min_verification_level END,
           machine_clients = coalesce($6, machine_clients),
           access_token_alg = coalesce($7, access_token_alg),
           updated_at = now()
         WHERE id = $1 RETURNING *`,
        [
          id,
          changes.name ?? null,
          changes.scopes ?? null,
          changes.minVerificationLevel !== undefined,
          changes.minVerificationLevel ?? null,
          changes.machineClients ?? null,
          changes.accessTokenAlg ?? null,
        ],
      );
      return row ? toResource(row) : null;
    },
    async setSecretHash(id: string, secretHash: string): Promise<Resource | null> {
      const [row] = await db.query<ResourceRow>(
        'UPDATE resources SET secret_hash = $2, updated_at = now() WHERE id = $1 RETURNING *',
        [id, secretHash],
      );
      return row ? toResource(row) : null;
    },
    async remove(id: string): Promise<Resource | null> {
      const [row] = await db.query<ResourceRow>('DELETE FROM resources WHERE id = $1 RETURNING *', [id]);
      return row ? toResource(row) : null;
    },
  };
}
export type ResourceStore = ReturnType<typeof resourceStore>;
