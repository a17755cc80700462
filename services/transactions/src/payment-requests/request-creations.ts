import {
  AppError,
  isConnectionError,
  WriteBatcher,
  type AuditActor,
  type AuditLog,
  type Db,
  type Queryable,
} from '@attest/common';
import type { OutboxWrite } from '../kernel/events';
import { checkReturnUrl, newRequest, sameCreation, type CreateRequest } from './create-request';
import { paymentRequestEvent } from './payment-request-events';
import { paymentRequestStore } from './payment-request-store';
import type { NewPaymentRequest, PaymentRequest } from './payment-request-types';
import { requestView, type PaymentRequestView, type RequestLinks } from './payment-request-view';
import type { PriceSource } from './price-quote';

/** A creation waiting to be written: the request and who asked for it. */
interface Creation {
  request: NewPaymentRequest;
  actor: AuditActor;
}

/** A creation written: the request and its view as committed. */
interface Created {
  request: PaymentRequest;
  view: PaymentRequestView;
}

/**
 * The creation of payment requests (POST …/payment-requests): once per (app, reference), and the creations
 * that arrive together written in one database transaction (WriteBatcher; bench/README.md, "What a payment
 * request's creation costs").
 */
export class RequestCreations {
  private readonly batcher = new WriteBatcher<Creation, Created | null>((c) => this.writeCreations(c), {
    // a database that is away fails the whole batch; an error about one request's data is its own
    retrySingly: (err) => !isConnectionError(err) && !(err instanceof AppError && err.status === 503),
  });

  constructor(
    private readonly db: Db,
    private readonly prices: PriceSource,
    private readonly options: {
      audit?: Pick<AuditLog, 'record'>;
      /** Where each creation's payment_request.created event is written, in its transaction. */
      outbox: OutboxWrite;
      links?: RequestLinks;
      /** A request was written: what caches it drop it (here and on every replica). */
      written: (id: string) => Promise<void>;
    },
  ) {}

  private store = (db: Queryable = this.db) => paymentRequestStore(db);

  /**
   * Creates once per (app, reference): the same creation again answers the stored request (`created`
   * false, no new price is fetched); one that differs is 409 reference_taken naming the field. A new
   * request comes with its view as committed (what a read answers: no payments yet, not expired).
   */
  async create(
    input: CreateRequest,
    actor: AuditActor,
  ): Promise<{ request: PaymentRequest; created: boolean; view?: PaymentRequestView }> {
    const sameAs = (existing: PaymentRequest) => {
      sameCreation(existing, input);
      return { request: existing, created: false };
    };
    // the same creation again answers the stored request without asking for a new price; a price in the
    // token with no return_url asks nothing before the insert, whose conflict on the reference says the same
    const lookFirst = !('tokenAmount' in input.price) || input.returnUrl !== null;
    const stored = lookFirst ? await this.store().findByReference(input.appId, input.reference) : null;
    if (stored) return sameAs(stored);
    if (input.returnUrl !== null)
      checkReturnUrl(input.returnUrl, (await this.store().policy(input.appId)).returnOrigins);
    const request = await newRequest(input, this.prices);
    const created = await this.batcher.write({ request, actor });
    if (created) return { ...created, created: true };
    // another creation of the same reference committed first
    const winner = await this.store().findByReference(input.appId, input.reference);
    if (!winner) throw new Error('payment request insert conflicted but no request holds the reference');
    return sameAs(winner);
  }

  /**
   * Writes the creations that arrive together in one database transaction (WriteBatcher): one statement
   * inserts the requests and their tokens, one writes their payment_request.created events, one their
   * audit records. Each creation's outcome: its request and view as committed, or null when its app had
   * already used the reference (then the reference's stored request decides, as for a lone creation).
   */
  private async writeCreations(creations: Creation[]): Promise<(Created | null)[]> {
    const outcomes = await this.db.transaction(async (tx) => {
      const stored = await this.store(tx).insertAll(creations.map((c) => c.request));
      const made = creations.map(({ request, actor }) => {
        const row = stored.get(request.id);
        // a new request has no payments: its view as a read would load it
        return row ? { request: row, view: requestView(row, [], null, this.options.links), actor } : null;
      });
      const news = made.filter((c) => c !== null);
      if (news.length === 0) return made;
      await this.options.outbox(
        tx,
        ...news.map((c) => paymentRequestEvent('payment_request.created', c.request, c.view, c.request.createdAt)),
      );
      await this.options.audit?.record(
        news.map(({ request: row, actor }) => ({
          type: 'payment_request.created',
          actor,
          subject: row.id,
          detail: {
            app_id: row.appId,
            reference: row.reference,
            accepted_tokens: row.accepted.map((a) => ({ token: a.token, amount_due: a.amountDue })),
          },
        })),
        tx,
      );
      return made;
    });
    await Promise.all(outcomes.map((c) => c && this.options.written(c.request.id)));
    return outcomes.map((c) => c && { request: c.request, view: c.view });
  }
}
