import Joi from 'joi';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** A JSON Schema (2020-12, as OpenAPI 3.1 has it). */
export type JsonSchema = Record<string, unknown>;
/** A joi schema (converted with joi-to-json) or a JSON Schema as it is. */
export type SchemaLike = Joi.Schema | JsonSchema;

export interface HeaderDoc {
  description: string;
  schema: JsonSchema;
}

export interface ResponseDoc {
  description: string;
  headers?: Record<string, HeaderDoc>;
  /** Media type → schema; a response without content has no body worth describing. */
  content?: Record<string, { schema?: SchemaLike }>;
}

export interface ParameterDoc {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema: JsonSchema;
  example?: unknown;
}

/** One method of one path, as endpoint() documents it. */
export interface OperationDoc {
  summary: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  /** The path parameters' joi object: each key becomes a required path parameter. */
  params?: Joi.ObjectSchema;
  /** The query's joi object: each key becomes a query parameter (required as joi says). */
  query?: Joi.ObjectSchema;
  /** Parameters no joi object describes (headers, cookies). */
  parameters?: ParameterDoc[];
  body?: { contentType: string | string[]; schema: SchemaLike; required?: boolean; description?: string };
  responses: Record<number, ResponseDoc>;
}

/** A route deliberately left out of the API document (static files of a page, say), with the reason. */
export interface Excluded {
  excluded: string;
}

export type EndpointDocs = Partial<Record<Method, OperationDoc>> | Excluded;

/** Marks a route as not part of the API, so the "every route documented" check knows it was left out on purpose. */
export const excludedFromApi = (reason: string): Excluded => ({ excluded: reason });

export interface RegisteredRoute {
  /** The path as express has it, prefix included: /users/:id */
  path: string;
  method: Method;
  doc?: OperationDoc;
  excluded?: string;
}

/** The routes of one API (a public or an admin app), gathered as endpoint() registers them. */
export class ApiRegistry {
  readonly routes: RegisteredRoute[] = [];
  /** Path prefixes (express syntax, prefix included) whose client errors are HTML pages (JSON when asked). */
  readonly pagePrefixes: string[] = [];

  add(route: RegisteredRoute): void {
    this.routes.push(route);
  }

  /** Whether path (express syntax, prefix included) and method were registered with a document or an exclusion. */
  accounted(path: string, method: string): boolean {
    return this.routes.some(
      (r) => r.path === path && (r.method === method.toUpperCase() || (method === 'head' && r.method === 'GET')),
    );
  }
}

const attached = new WeakMap<object, { registry: ApiRegistry; prefix: string }>();

/** Routes endpoint() mounts on `router` are recorded in `registry`, their paths under `prefix` (the router's mount path). */
export function attachApiRegistry(router: object, registry: ApiRegistry, prefix = ''): void {
  attached.set(router, { registry, prefix });
}

/**
 * Says that the paths under `prefix` on `router` answer their client errors as HTML pages (JSON when asked),
 * as a page's error handler mounted there does: their documented 405 lists text/html too.
 */
export function documentPageErrors(router: object, prefix: string): void {
  const api = attached.get(router);
  if (api) api.registry.pagePrefixes.push(api.prefix + prefix);
}

export function apiRegistryOf(router: object): { registry: ApiRegistry; prefix: string } | undefined {
  return attached.get(router);
}

/** Documents a route mounted without endpoint() (router.get and the like). */
export function documentRoute(router: object, method: Method, path: string, doc: OperationDoc | Excluded): void {
  const api = attached.get(router);
  if (!api) return;
  if ('excluded' in doc) api.registry.add({ path: api.prefix + path, method, excluded: doc.excluded });
  else api.registry.add({ path: api.prefix + path, method, doc });
}

/** express `/users/:id` → OpenAPI `/users/{id}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

export function toJsonSchema(schema: SchemaLike): JsonSchema {
  if (!Joi.isSchema(schema)) return schema;
  // joi-to-json (with all of lodash) only when a document is built: at the first request for it, not at start-up
  // (its module.exports is the parse function, which its types call the default export)
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at first use, synchronously
  const parseJoi = require('joi-to-json') as typeof import('joi-to-json').default;
  return parseJoi(schema, 'open-api-3.1') as JsonSchema;
}

/** The keys of a joi object as OpenAPI parameters. */
function parametersOf(schema: Joi.ObjectSchema, where: 'path' | 'query'): ParameterDoc[] {
  const json = toJsonSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, examples, ...rest } = property as JsonSchema & { description?: string; examples?: unknown[] };
    return {
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: rest,
      ...(Array.isArray(examples) && examples.length ? { example: examples[0] } : {}),
    };
  });
}

function responseObject(response: ResponseDoc): Record<string, unknown> {
  return {
    description: response.description,
    ...(response.headers ? { headers: response.headers } : {}),
    ...(response.content
      ? {
          content: Object.fromEntries(
            Object.entries(response.content).map(([type, media]) => [
              type,
              media.schema ? { schema: toJsonSchema(media.schema) } : {},
            ]),
          ),
        }
      : {}),
  };
}

function operationObject(route: RegisteredRoute, doc: OperationDoc): Record<string, unknown> {
  const pathNames = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  const parameters = [
    ...(doc.params
      ? parametersOf(doc.params, 'path')
      : pathNames.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }))),
    ...(doc.query ? parametersOf(doc.query, 'query') : []),
    ...(doc.parameters ?? []),
  ];
  const body = doc.body && {
    required: doc.body.required ?? true,
    ...(doc.body.description ? { description: doc.body.description } : {}),
    content: Object.fromEntries(
      ([] as string[]).concat(doc.body.contentType).map((type) => [type, { schema: toJsonSchema(doc.body!.schema) }]),
    ),
  };
  return {
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    ...(doc.tags ? { tags: doc.tags } : {}),
    ...(doc.security ? { security: doc.security } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: Object.fromEntries(
      Object.entries(doc.responses).map(([status, response]) => [status, responseObject(response)]),
    ),
  };
}

export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
};

export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
  /** The URL clients reach this API at (the servers entry). */
  serverUrl: string;
  /** securitySchemes and shared schemas; the Error schema is always added. */
  components?: { securitySchemes?: Record<string, unknown>; schemas?: Record<string, JsonSchema> };
}

/** What any operation may answer: a bug, or its storage out of reach. */
const ALWAYS: Record<number, ResponseDoc> = {
  500: {
    description: 'An unexpected error on our side, logged with the request id (X-Request-Id)',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
  503: {
    description: 'service_unavailable: the storage this operation needs is out of reach; try again shortly',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
};

/**
 * A browser page's path answers its client errors as an HTML page (JSON when asked): it is under a prefix
 * documentPageErrors names, or some operation of it documents a client error as HTML.
 */
const answersPages = (registry: ApiRegistry, path: string, docs: OperationDoc[]) =>
  registry.pagePrefixes.some((p) => path === openApiPath(p) || path.startsWith(`${openApiPath(p)}/`)) ||
  docs.some((doc) =>
    Object.entries(doc.responses).some(
      ([status, r]) => status.startsWith('4') && r.content && 'text/html' in r.content,
    ),
  );

/**
 * 405 method_not_allowed, which every path sends for a method it does not take (endpoint(), and the
 * admin routers' fallback): documented on each operation of the path, in the path's error style.
 */
const notAllowed = (pages: boolean): ResponseDoc => ({
  description:
    'method_not_allowed: the path does not take this request’s method; Allow lists those it takes' +
    (pages ? ' (an HTML page, or JSON when asked)' : ''),
  headers: { Allow: { description: 'The methods the path takes', schema: { type: 'string' } } },
  content: {
    ...(pages ? { 'text/html': { schema: { type: 'string' } } } : {}),
    'application/json': { schema: { $ref: '#/components/schemas/Error' } },
  },
});

/** Builds the OpenAPI 3.1 document from what endpoint() registered: the joi that validates is the schema documented. */
export function buildOpenApiDocument(info: ApiInfo, registry: ApiRegistry, errorSchema: JsonSchema): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  const byPath = new Map<string, OperationDoc[]>();
  for (const route of registry.routes)
    if (route.doc) byPath.set(openApiPath(route.path), [...(byPath.get(openApiPath(route.path)) ?? []), route.doc]);
  for (const route of registry.routes) {
    if (!route.doc) continue;
    const path = openApiPath(route.path);
    const operations = (paths[path] ??= {});
    const always = { ...ALWAYS, 405: notAllowed(answersPages(registry, path, byPath.get(path)!)) };
    operations[route.method.toLowerCase()] = operationObject(route, {
      ...route.doc,
      responses: {
        ...route.doc.responses,
        ...Object.fromEntries(Object.entries(always).filter(([s]) => !(s in route.doc!.responses))),
      },
    });
  }
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      ...(info.description ? { description: info.description } : {}),
    },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      ...(info.components?.securitySchemes ? { securitySchemes: info.components.securitySchemes } : {}),
      schemas: { Error: errorSchema, ...info.components?.schemas },
    },
  };
}
