/** What a service offers the fuzzer: its endpoints, and the names, values and headers that reach deeper steps. */

/** How an endpoint answers errors: the JSON shape, the shape plus OAuth's pair, or an HTML page (JSON if asked). */
export type ErrorStyle = 'json' | 'oauth' | 'page';

export interface FuzzEndpoint {
  /** The path; `{}` is a parameter segment the fuzzer fills in. */
  path: string;
  errors: ErrorStyle;
  /** The methods it answers; most generated requests use one of them. */
  methods: string[];
  /** It reads an application/x-www-form-urlencoded body. */
  form?: boolean;
  /** Good values for the `{}` segment. */
  values?: string[];
  /** The fields it reads, tried more often than the surface's other names. */
  names?: string[];
  /** Well-formed field sets (`a=1&b=2`) that reach its deeper steps; hostile fields are added after them. */
  base?: string[];
  /** Headers that get it past authentication or find its state (else the surface's). */
  headers?: [string, string][];
}

export interface FuzzSurface {
  endpoints: FuzzEndpoint[];
  /** Query and form field names the service reads. */
  names: string[];
  /** Values that get past the first checks: ids, redirect URIs, scopes, codes. */
  values: string[];
  /** Header pairs that get past authentication or find state: credentials, cookies. */
  headers: [string, string][];
}
