/**
 * Every response a test gets through supertest from an app that serves an OpenAPI document is checked
 * against that document (jest setupFilesAfterEnv): the operation must document the status, the content
 * type, and the body must validate (ajv, JSON Schema 2020-12). A mismatch fails the request, naming the
 * method, path, status and ajv's errors. Routes the document does not list (excluded static files, routes
 * of test-only apps) are left to the "every route documented" test.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Express } from 'express';
import { Test } from 'supertest';
import { servedApiOf, type JsonSchema, type OpenApiDocument } from '../../src/http/openapi';

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

function validator(schema: JsonSchema, document: OpenApiDocument): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) compiled.set(schema, (fn = ajv.compile({ ...schema, components: document.components })));
  return fn;
}

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

const templates = new WeakMap<OpenApiDocument, { path: string; pattern: RegExp }[]>();
function pathsOf(document: OpenApiDocument) {
  let list = templates.get(document);
  if (!list) {
    list = Object.keys(document.paths)
      // literal paths first: /account/passkeys before a template could claim it
      .sort((a, b) => Number(a.includes('{')) - Number(b.includes('{')))
      .map((path) => ({
        path,
        pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
      }));
    templates.set(document, list);
  }
  return list;
}

interface Answer {
  status: number;
  type: string;
  body: unknown;
  text?: string;
  headers: Record<string, string>;
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** Why the answer does not match the document, or null. */
export function documentMismatch(
  document: OpenApiDocument,
  method: string,
  pathname: string,
  res: Answer,
): string | null {
  method = method.toLowerCase();
  const where = `${method.toUpperCase()} ${pathname} → ${res.status}`;
  const found = pathsOf(document).find((p) => p.pattern.test(pathname));
  const isJson = /^application\/(.+\+)?json$/.test(res.type);
  const checkError = (): string | null => {
    if (res.type === 'text/html') return null;
    if (!isJson) return `${where}: an error answered as ${res.type || 'no content type'}`;
    const validate = validator(ERROR_REF, document);
    return validate(res.body) ? null : `${where}: not the documented Error body: ${ajv.errorsText(validate.errors)}`;
  };
  // a path the document does not list: nothing to hold it to, unless it is the shared not-found error
  if (!found) return res.status === 404 ? checkError() : null;
  const operations = document.paths[found.path] as Record<string, Operation>;
  const operation = operations[method === 'head' ? 'get' : method];
  if (!operation) {
    // a method the path does not have: refused with the shared error (a page's error page on pages)
    if (res.status < 400 || res.status >= 500)
      return `${where}: ${method.toUpperCase()} is not documented for ${found.path}`;
    return checkError();
  }
  const response = operation.responses[String(res.status)] ?? operation.responses.default;
  if (!response)
    return `${where}: status ${res.status} is not documented for ${method.toUpperCase()} ${found.path} (documented: ${Object.keys(operation.responses).join(', ')})`;
  if (method === 'head' || res.status === 204 || res.status === 304) return null;
  // a redirect asked for without text or HTML carries no body (Express's note is only in those types)
  if (res.status >= 300 && res.status < 400 && !res.type) return null;
  if (!response.content) {
    if (isJson) return `${where}: a JSON body where ${method.toUpperCase()} ${found.path} documents none`;
    return null;
  }
  const media = response.content[res.type] ?? (isJson ? response.content['application/json'] : undefined);
  if (!media)
    return `${where}: content type ${res.type || '(none)'} is not documented (documented: ${Object.keys(response.content).join(', ')})`;
  if (!media.schema || !isJson) return null;
  const validate = validator(media.schema, document);
  if (validate(res.body)) return null;
  return `${where}: the body does not match the documented schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`;
}

type Assert = (
  this: Test,
  resError: Error | null,
  res: Answer | undefined,
  fn?: (err: Error | null, res?: Answer) => void,
) => void;
const prototype = Test.prototype as unknown as { assert: Assert; app?: unknown; method: string; url: string };
const original = prototype.assert;
prototype.assert = function (this: Test & { app?: { listeners?(e: string): unknown[] } }, resError, res, fn) {
  const handler = this.app?.listeners?.('request')?.[0] as Express | undefined;
  const api = handler && servedApiOf(handler);
  if (api && res) {
    const mismatch = documentMismatch(api.document(), this.method, new URL(this.url).pathname, res);
    if (mismatch) return original.call(this, new Error(`OpenAPI (${api.info.title}): ${mismatch}`), undefined, fn);
  }
  return original.call(this, resError, res, fn);
};
