import type { Observation } from '../kernel/observation';
import type { LatestValues, PriceAnswer, PriceHistory, PriceService, PriceStore, StoredWrite } from '../prices';
import { buildAnswer } from '../prices';

/** A stream reconnected within this long of a write it missed is sent the answers written since (else the current one). */
export const REPLAY_SECONDS = 300;
/** ...and at most this many writes (quotes and FX rates, of any pair) since its id. */
export const REPLAY_WRITES = 1000;

/** An event of the stream: its id is `<version>.<tag>`, the tag the answer's ETag (or `unavailable`). */
export interface StreamEvent {
  version: number;
  tag: string;
  event: 'price' | 'unavailable';
  data: Buffer | string;
}

export const eventId = (e: Pick<StreamEvent, 'version' | 'tag'>) => `${e.version}.${e.tag}`;

/** `<version>.<tag>` as the stream sends it; a bare tag (an id sent before versions) has no version. */
export function parseEventId(id: string | undefined): { version: number | null; tag: string } | null {
  if (!id) return null;
  const m = /^(\d{1,15})\.(.+)$/.exec(id);
  return m ? { version: Number(m[1]), tag: m[2] } : { version: null, tag: id };
}

export interface StreamQuery {
  tokens: string[];
  fiats: string[];
  change: boolean;
}

export interface ReplayDeps {
  store: Pick<PriceStore, 'writesSince' | 'latestAsOf'>;
  prices: Pick<PriceService, 'answerFrom'>;
  history: Pick<PriceHistory, 'changes'>;
  now: () => number;
}

/** The stream's event of an answer or of its error (the body of the error answer). */
export function toEvent(
  version: number,
  outcome: { answer: PriceAnswer } | { error: { code: string; detail: string; attribute?: string | null } },
): StreamEvent {
  if ('answer' in outcome)
    return { version, tag: outcome.answer.etag.slice(1, -1), event: 'price', data: outcome.answer.body };
  const { code, detail, attribute } = outcome.error;
  const data = JSON.stringify({ code, detail, attribute: attribute ?? null });
  return { version, tag: 'unavailable', event: 'unavailable', data };
}

const add = (values: LatestValues, w: StoredWrite) => {
  const o: Observation = { amount: w.amount, decimals: w.decimals, source: w.source, observedAt: w.observedAt };
  const newer = (old: Observation | undefined) => !old || old.observedAt.getTime() <= o.observedAt.getTime();
  if (w.token === null) {
    if (newer(values.fx.get(w.fiat))) values.fx.set(w.fiat, o);
    return;
  }
  const key = `${w.token}/${w.fiat}`;
  const list = values.quotes.get(key) ?? [];
  const i = list.findIndex((q) => q.source === o.source);
  if (i < 0) values.quotes.set(key, [...list, o]);
  else if (newer(list[i]))
    values.quotes.set(
      key,
      list.map((q, j) => (j === i ? o : q)),
    );
};

/**
 * The events a stream missed since version `after` (whose answer had tag `seenTag`), up to version `upTo`:
 * the stored prices as of `after` (read from the store, the same for every replica), then each write since
 * in the order of the write sequence, each answer judged fresh when it was written, sent when its tag
 * differs from the one before. Null when the id is too old to replay (a write since it is older than
 * REPLAY_SECONDS, or more than REPLAY_WRITES writes): the stream then sends the current answer.
 */
export async function missedEvents(
  deps: ReplayDeps,
  query: StreamQuery,
  after: number,
  seenTag: string,
  upTo: number,
): Promise<StreamEvent[] | null> {
  const writes = await deps.store.writesSince(after, upTo, REPLAY_WRITES + 1);
  const oldest = deps.now() - REPLAY_SECONDS * 1000;
  if (writes.length > REPLAY_WRITES || writes.some((w) => w.recordedAt.getTime() < oldest)) return null;
  const relevant = (w: StoredWrite) =>
    w.token === null
      ? query.fiats.includes(w.fiat)
      : query.tokens.includes(w.token) && (query.fiats.includes(w.fiat) || w.fiat === 'USD');
  if (!writes.some(relevant)) return [];
  const latest = await deps.store.latestAsOf(after);
  const values: LatestValues = { quotes: new Map(), fx: new Map(latest.fx.map((r) => [r.fiat, r] as const)) };
  for (const q of latest.quotes)
    values.quotes.set(`${q.token}/${q.fiat}`, [...(values.quotes.get(`${q.token}/${q.fiat}`) ?? []), q]);
  const events: StreamEvent[] = [];
  let tag = seenTag;
  for (const w of writes) {
    add(values, w);
    if (!relevant(w)) continue;
    const outcome = deps.prices.answerFrom(values, query.tokens, query.fiats, w.recordedAt.getTime());
    const withChange =
      query.change && 'answer' in outcome
        ? { answer: buildAnswer(outcome.prices, { change: await deps.history.changes(outcome.prices) }) }
        : outcome;
    const event = toEvent(w.id, withChange);
    if (event.tag === tag) continue;
    tag = event.tag;
    events.push(event);
  }
  return events;
}
