import type { FeedResult } from '../kernel/observation';

export type { FeedResult };

/** A price source: one call fetches what it knows now. */
export interface Feed {
  name: string;
  fetch(): Promise<FeedResult>;
}
